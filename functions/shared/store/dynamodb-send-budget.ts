/**
 * The account's send-rate budget in the service's table, shared by every request on every
 * instance: one item holding the account's schedule and each contending Organization's part of
 * it (domain/fair-share.ts says what they mean and why). A round of booking is a read-modify-write
 * of that item: `bookRound` on the state last seen, written back on condition that its version is
 * still the one read. A lost race re-reads and tries again; nobody's update is ever lost.
 *
 * The state last written by this instance is kept, so a round usually costs one conditional write
 * and no read: the read happens only after another writer moved the item.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { NumberValue, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import type { BudgetState, Release, Round, RoundAsk } from '../domain/fair-share';
import { EMPTY_STATE, MIN_ROUND_GAP_MS, bookRound, releaseTurns, sanitize } from '../domain/fair-share';
import type { Pace } from '../domain/send-pace';
import { unlessConditionFails } from './conditions';
import type { SendBudget } from './ports';
import { withStorageFaults } from './storage-errors';
import { itemKey } from './table';

/** Conditional writes lost to other writers before a round gives up (and waits a moment). */
const MAX_TRIES = 6;
/** The item outlives any booking; an idle account's item expires and is made anew. */
const KEEP_SECONDS = 24 * 60 * 60;

interface Seen {
  readonly version: number;
  readonly raw: unknown;
}

export class DynamoDbSendBudget implements SendBudget {
  private seen: Seen | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  book(ask: RoundAsk): Promise<Round> {
    return this.inTurn(() => this.bookRound(ask));
  }

  /**
   * Rounds of this instance's requests run one at a time: they would only race each other for
   * the same version of the item and lose writes. Instances still race, and conditions settle it.
   */
  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private bookRound(ask: RoundAsk): Promise<Round> {
    return withStorageFaults(async () => {
      for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
        const seen = this.seen ?? (await this.read());
        const round = bookRound(sanitize(seen.raw, ask.now, ask.pace), ask);
        if (await this.write(seen, round.state, ask.now)) return round;
      }
      // Lost every race: others are booking right now; this request books again in a moment.
      return { state: EMPTY_STATE, turns: [], stop: 'wait', at: ask.now + MIN_ROUND_GAP_MS * (1 + Math.random()), holding: undefined };
    });
  }

  release(release: Release, pace: Pace | undefined, now: number): Promise<void> {
    return this.inTurn(() => withStorageFaults(async () => {
      for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
        const seen = this.seen ?? (await this.read());
        const state = releaseTurns(sanitize(seen.raw, now, pace), release, pace, now);
        if (await this.write(seen, state, now)) return;
      }
    }));
  }

  private async read(): Promise<Seen> {
    // Read raw: the document client refuses numbers beyond 2^53 (a corrupt `tat: 1e30`) with an
    // error, which would turn every send into a 503 until someone deleted the item by hand.
    const { Item } = await this.client.send(new GetItemCommand({ TableName: this.tableName, Key: marshall(itemKey.sendBudget()), ConsistentRead: true }));
    const raw = plainNumbers(Item ? unmarshall(Item, { wrapNumbers: true }) : {}) as { v?: unknown };
    const version = Number(raw.v);
    return { version: Number.isSafeInteger(version) ? version : 0, raw };
  }

  /** Writes `state` if the item is still at the version seen; false (and forgets it) if not. */
  private async write(seen: Seen, state: BudgetState, now: number): Promise<boolean> {
    const version = seen.version + 1;
    const made = await unlessConditionFails(() =>
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: itemKey.sendBudget(),
          UpdateExpression: 'SET tat = :tat, orgs = :orgs, v = :next, expiresAt = :expires',
          // An item from before versions (or a corrupt one) counts as version 0.
          ConditionExpression: seen.version === 0 ? 'attribute_not_exists(v) OR v = :seen OR NOT attribute_type(v, :number)' : 'v = :seen',
          ExpressionAttributeValues: {
            ':tat': state.tat,
            ':orgs': compact(state),
            ':next': version,
            ':seen': seen.version,
            ':expires': Math.ceil(now / 1_000) + KEEP_SECONDS,
            ...(seen.version === 0 && { ':number': 'N' }),
          },
        }),
      ),
    );
    this.seen = made ? { version, raw: { tat: state.tat, orgs: compact(state) } } : undefined;
    return made;
  }
}

/** Holdings as [from, to, units] triples: the item is read and written on every round, so it stays small. */
function compact(state: BudgetState): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(state.orgs).map(([id, { held, ...rest }]) => [id, { ...rest, held: held.map((h) => [h.from, h.to, h.units]) }]),
  );
}

/** Numbers as JavaScript numbers, however large (sanitize decides what is too large). */
function plainNumbers(value: unknown): unknown {
  if (value instanceof NumberValue) return Number(value.value);
  if (Array.isArray(value)) return value.map(plainNumbers);
  if (value instanceof Set) return value;
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plainNumbers(v)]));
  return value;
}
