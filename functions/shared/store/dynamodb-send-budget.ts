/**
 * The account's send-rate budget in the service's table, shared by every request on every
 * instance: one item holding the account's schedule and each contending Organization's part of
 * it (domain/fair-share.ts says what they mean and why). A round of booking is a read-modify-write
 * of that item: `bookRound` on the state last seen, written back on condition that its version is
 * still the one read. A lost race re-reads and tries again; nobody's update is ever lost.
 *
 * The state last written by this instance is kept, so a round usually costs one conditional write
 * and no read: the read happens only after another writer moved the item.
 *
 * Above one shard's rate (domain/budget-shards.ts), the budget is split: a round reads two
 * shards drawn at random (each its own item, `BUDGET#ses-send-rate#<k>`) and books on the one
 * with less ahead; a shard that cannot be read is stepped around, and only a round that can read
 * none of its shards fails (503).
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { NumberValue, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import type { BudgetState, Release, Round, RoundAsk } from '../domain/fair-share';
import { EMPTY_STATE, MIN_ROUND_GAP_MS, bookRound, releaseTurns, sanitize } from '../domain/fair-share';
import { SHARD_ENTRIES, chooseShard, homeShard } from '../domain/budget-shards';
import type { Pace } from '../domain/send-pace';
import { paceFor } from '../domain/send-pace';
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

/** Which item: the one budget item (`undefined`), or shard `k` of a split budget. */
type Shard = number | undefined;

export class DynamoDbSendBudget implements SendBudget {
  private readonly seen = new Map<Shard, Seen>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    /** Draws in [0, 1) for the shard choice (tests pass their own). */
    private readonly draw: () => number = Math.random,
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
      const shards = ask.pace ? Math.max(1, Math.floor(ask.shards ?? 1)) : 1;
      // Each shard paces at its part of the (possibly slowed) account rate: together, the rate.
      const pace = ask.pace && shards > 1 ? paceFor(1_000 / ask.pace.intervalMs / shards) : ask.pace;
      for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
        const readable = await this.readSome(this.candidates(ask, shards));
        const shard = pick(readable, ask.now, pace);
        const seen = readable.get(shard)!;
        const round = bookRound(sanitize(seen.raw, ask.now, pace, shards > 1 ? SHARD_ENTRIES : undefined), { ...ask, pace });
        if (await this.write(shard, seen, round.state, ask.now)) return shard === undefined ? round : { ...round, shard };
      }
      // Lost every race: others are booking right now; this request books again in a moment.
      return { state: EMPTY_STATE, turns: [], stop: 'wait', at: ask.now + MIN_ROUND_GAP_MS * (1 + this.draw()), holding: undefined };
    });
  }

  /**
   * The one item; or two shards drawn at random (budget-shards.ts); or, for an Organization with
   * a rate of its own, its home shard, where that rate's schedule lives whole.
   */
  private candidates(ask: RoundAsk, shards: number): Shard[] {
    if (shards === 1) return [undefined];
    if (ask.cap !== undefined) return [homeShard(ask.organizationId, shards)];
    return [Math.floor(this.draw() * shards), Math.floor(this.draw() * shards)];
  }

  /** The items that could be read; a shard that cannot be is left out, and if none can, the first error stands. */
  private async readSome(shards: readonly Shard[]): Promise<Map<Shard, Seen>> {
    const answers = await Promise.allSettled(shards.map(async (shard) => [shard, this.seen.get(shard) ?? (await this.read(shard))] as const));
    const readable = new Map(answers.flatMap((answer) => (answer.status === 'fulfilled' ? [answer.value] : [])));
    const failed = answers.find((answer) => answer.status === 'rejected');
    if (readable.size === 0 && failed?.status === 'rejected') throw failed.reason;
    return readable;
  }

  release(release: Release, pace: Pace | undefined, now: number): Promise<void> {
    // On a shard, only the share is given back: its schedule runs at a part of `pace`, and turns
    // left on it pass within a horizon anyway.
    const shardPace = release.shard === undefined ? pace : undefined;
    return this.inTurn(() => withStorageFaults(async () => {
      for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
        const seen = this.seen.get(release.shard) ?? (await this.read(release.shard));
        const state = releaseTurns(sanitize(seen.raw, now, shardPace), release, shardPace, now);
        if (await this.write(release.shard, seen, state, now)) return;
      }
    }));
  }

  private async read(shard: Shard): Promise<Seen> {
    // Read raw: the document client refuses numbers beyond 2^53 (a corrupt `tat: 1e30`) with an
    // error, which would turn every send into a 503 until someone deleted the item by hand.
    const { Item } = await this.client.send(new GetItemCommand({ TableName: this.tableName, Key: marshall(itemKey.sendBudget(shard)), ConsistentRead: true }));
    const raw = plainNumbers(Item ? unmarshall(Item, { wrapNumbers: true }) : {}) as { v?: unknown };
    const version = Number(raw.v);
    return { version: Number.isSafeInteger(version) ? version : 0, raw };
  }

  /** Writes `state` if the item is still at the version seen; false (and forgets it) if not. */
  private async write(shard: Shard, seen: Seen, state: BudgetState, now: number): Promise<boolean> {
    const version = seen.version + 1;
    const made = await unlessConditionFails(() =>
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: itemKey.sendBudget(shard),
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
    if (made) this.seen.set(shard, { version, raw: { tat: state.tat, orgs: compact(state) } });
    else this.seen.delete(shard);
    return made;
  }
}

/** Of the shards read, the one with less booked ahead (budget-shards.ts `chooseShard`). */
function pick(readable: ReadonlyMap<Shard, Seen>, now: number, pace: Pace | undefined): Shard {
  const shards = [...readable.keys()];
  if (shards.length === 1 || shards[0] === undefined || shards[1] === undefined) return shards[0];
  const states = new Map(shards.map((shard) => [shard!, sanitize(readable.get(shard)!.raw, now, pace, SHARD_ENTRIES)]));
  return chooseShard(states, shards[0], shards[1]);
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
