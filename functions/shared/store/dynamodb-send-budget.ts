/**
 * The account's send-rate budget in the service's table, shared by every request on every
 * instance: one item holding the account's schedule and each contending Organization's part of
 * it (domain/fair-share.ts says what they mean and why). A round of booking is a read-modify-write
 * of that item: `bookRound` on the state last seen, written back on condition that its version is
 * still the one read. A lost race tries again on the item as the winner left it (DynamoDB sends it
 * back with the failed write; an emulator that does not, costs a read); nobody's update is ever lost.
 *
 * The state last written (or read) by this instance is kept, so a round usually costs one
 * conditional write and no read: the read happens only after another writer moved the item. The
 * rounds of this instance's requests that wait for the same item are written together, one
 * conditional write for all of them (group commit): on a stack serving many requests at once
 * they would otherwise queue behind each other's writes, or race each other for one version.
 *
 * Above one shard's rate (domain/budget-shards.ts), the budget is split over shard items
 * (`BUDGET#ses-send-rate#<k>`). An instance books on a shard of its own choosing while that shard
 * has room now, and on the less busy of it and a shard drawn at random when it has not; a shard
 * that cannot be read is stepped around, and only a round that can read none of its shards
 * fails (503).
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { ConditionalCheckFailedException, GetItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { NumberValue, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import type { BudgetState, Release, Round, RoundAsk } from '../domain/fair-share';
import { EMPTY_STATE, MIN_ROUND_GAP_MS, bookRound, releaseTurns, sanitize } from '../domain/fair-share';
import { SHARD_ENTRIES, chooseShard, homeShard } from '../domain/budget-shards';
import type { Pace } from '../domain/send-pace';
import { paceFor } from '../domain/send-pace';
import type { SendBudget } from './ports';
import { withStorageFaults } from './storage-errors';
import { itemKey } from './table';

/** Conditional writes lost to other writers before a round gives up (and waits a moment). */
const MAX_TRIES = 6;
/** Rounds of this instance written together in one conditional write on a shard (its entries stay few: the item stays well under 4 KB). */
const MAX_BATCH = 8;
/** The item outlives any booking; an idle account's item expires and is made anew. */
const KEEP_SECONDS = 24 * 60 * 60;

interface Seen {
  readonly version: number;
  readonly raw: unknown;
}

/** Which item: the one budget item (`undefined`), or shard `k` of a split budget. */
type Shard = number | undefined;

/** One change to an item's state waiting for its lane's next write: a round, or turns given back. */
interface Change {
  readonly now: number;
  readonly pace: Pace | undefined;
  apply(state: BudgetState): BudgetState;
  /** Told whether its change was written (false: every try lost its race). */
  settle(written: boolean): void;
  fail(error: unknown): void;
}

export class DynamoDbSendBudget implements SendBudget {
  private readonly seen = new Map<Shard, Seen>();
  /** Reads under way for the shard choice, shared by the rounds that wait for them. */
  private readonly reading = new Map<Shard, Promise<Seen>>();
  /** Changes waiting per item, and whether a write of that item is under way. */
  private readonly lanes = new Map<Shard, { pending: Change[]; writing: boolean }>();
  /** This instance's first choice of shard, drawn once: its rounds rarely race another instance's. */
  private preferred: number | undefined;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    /** Draws in [0, 1) for the shard choice (tests pass their own). */
    private readonly draw: () => number = Math.random,
  ) {}

  book(ask: RoundAsk): Promise<Round> {
    return withStorageFaults(async () => {
      const shards = ask.pace ? Math.max(1, Math.floor(ask.shards ?? 1)) : 1;
      // Each shard paces at its part of the (possibly slowed) account rate: together, the rate.
      const pace = ask.pace && shards > 1 ? paceFor(1_000 / ask.pace.intervalMs / shards) : ask.pace;
      const shard = await this.choose(ask, shards, pace);
      let round: Round | undefined;
      const written = await this.change(shard, ask.now, pace, (state) => {
        round = bookRound(state, { ...ask, pace });
        return round.state;
      });
      // Lost every race: others are booking right now; this request books again in a moment.
      if (!written || !round) return { state: EMPTY_STATE, turns: [], stop: 'wait', at: ask.now + MIN_ROUND_GAP_MS * (1 + this.draw()), holding: undefined };
      return shard === undefined ? round : { ...round, shard };
    });
  }

  release(release: Release, pace: Pace | undefined, now: number): Promise<void> {
    // On a shard, only the share is given back: its schedule runs at a part of `pace`, and turns
    // left on it pass within a horizon anyway.
    const shardPace = release.shard === undefined ? pace : undefined;
    return withStorageFaults(async () => {
      await this.change(release.shard, now, shardPace, (state) => releaseTurns(state, release, shardPace, now));
    });
  }

  /**
   * Where a round books: the one item; for an Organization with a rate of its own, its home shard,
   * where that rate's schedule lives whole; otherwise this instance's preferred shard while it has
   * room now (as last seen: a stale view costs a lost race, never a wrong booking), else the one
   * of it and a shard drawn at random with less booked ahead ("two choices", budget-shards.ts).
   * A shard not yet seen is read; one that cannot be read is stepped around.
   */
  private async choose(ask: RoundAsk, shards: number, pace: Pace | undefined): Promise<Shard> {
    if (shards === 1) return undefined;
    if (ask.cap !== undefined) return homeShard(ask.organizationId, shards);
    const first = (this.preferred ??= Math.floor(this.draw() * shards) % shards);
    const known = this.seen.get(first);
    if (known && sanitize(known.raw, ask.now, pace, SHARD_ENTRIES).tat <= ask.now) return first;
    const second = Math.floor(this.draw() * shards);
    const readable = await this.readSome(second === first ? [first] : [first, second]);
    const states = new Map([...readable].map(([shard, seen]) => [shard!, sanitize(seen.raw, ask.now, pace, SHARD_ENTRIES)]));
    // Its own shard cannot be read: the other becomes its own, or every round would need luck.
    if (!readable.has(first)) this.preferred = second;
    return chooseShard(states, first, second);
  }

  /** The items that could be read (as last seen, if seen); a shard that cannot be is left out, and if none can, the first error stands. */
  private async readSome(shards: readonly Shard[]): Promise<Map<Shard, Seen>> {
    const answers = await Promise.allSettled(shards.map(async (shard) => [shard, this.seen.get(shard) ?? (await this.look(shard))] as const));
    const readable = new Map(answers.flatMap((answer) => (answer.status === 'fulfilled' ? [answer.value] : [])));
    const failed = answers.find((answer) => answer.status === 'rejected');
    if (readable.size === 0 && failed?.status === 'rejected') throw failed.reason;
    return readable;
  }

  private look(shard: Shard): Promise<Seen> {
    // Kept as seen, so the booking that follows writes on it instead of reading it again (unless a
    // write meanwhile left a newer view).
    const reading =
      this.reading.get(shard) ??
      this.read(shard)
        .then((seen) => {
          if (!this.seen.has(shard)) this.seen.set(shard, seen);
          return seen;
        })
        .finally(() => this.reading.delete(shard));
    this.reading.set(shard, reading);
    return reading;
  }

  /**
   * Queues a change to one item; resolves true once it is written, false if every try lost.
   * This instance's changes to one item go in one conditional write per turn of the lane (up to
   * `MAX_BATCH` of them, applied in the order they came): they would only race each other for
   * the same version otherwise. Instances still race, and the condition settles it.
   */
  private change(shard: Shard, now: number, pace: Pace | undefined, apply: (state: BudgetState) => BudgetState): Promise<boolean> {
    return new Promise<boolean>((settle, fail) => {
      const lane = this.lanes.get(shard) ?? { pending: [], writing: false };
      this.lanes.set(shard, lane);
      lane.pending.push({ now, pace, apply, settle, fail });
      if (!lane.writing) void this.drain(shard, lane);
    });
  }

  private async drain(shard: Shard, lane: { pending: Change[]; writing: boolean }): Promise<void> {
    lane.writing = true;
    while (lane.pending.length > 0) {
      const batch = lane.pending.splice(0, MAX_BATCH);
      try {
        const written = await this.commit(shard, batch);
        for (const change of batch) change.settle(written);
      } catch (error) {
        // Not a lost race but a fault: what was seen of the item is not trusted, nor is it preferred.
        this.seen.delete(shard);
        if (shard === this.preferred) this.preferred = undefined;
        for (const change of batch) change.fail(error);
      }
    }
    lane.writing = false;
  }

  /** Applies the batch to the item as last seen and writes it on condition; after a lost race, applies it again to what won. */
  private async commit(shard: Shard, batch: readonly Change[]): Promise<boolean> {
    const { now, pace } = batch[0]!;
    // A shard keeps its few entries whatever the batch holds (a give-back too), so it stays small.
    const entries = shard === undefined ? undefined : SHARD_ENTRIES;
    for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
      const seen = this.seen.get(shard) ?? (await this.read(shard));
      const state = batch.reduce((current, change) => change.apply(current), sanitize(seen.raw, now, pace, entries));
      if (await this.write(shard, seen, state, now)) return true;
    }
    return false;
  }

  private async read(shard: Shard): Promise<Seen> {
    // Read raw: the document client refuses numbers beyond 2^53 (a corrupt `tat: 1e30`) with an
    // error, which would turn every send into a 503 until someone deleted the item by hand.
    const { Item } = await this.client.send(new GetItemCommand({ TableName: this.tableName, Key: marshall(itemKey.sendBudget(shard)), ConsistentRead: true }));
    return seenOf(Item);
  }

  /** Writes `state` if the item is still at the version seen; false (and forgets it) if not. */
  private async write(shard: Shard, seen: Seen, state: BudgetState, now: number): Promise<boolean> {
    const version = seen.version + 1;
    try {
      await this.client.send(
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
          // A lost race comes back with the item as the winner left it: the next try needs no read.
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      // (An emulator that does not send the item back: the next try reads it.)
      if (error.Item) this.seen.set(shard, seenOf(error.Item));
      else this.seen.delete(shard);
      return false;
    }
    this.seen.set(shard, { version, raw: { tat: state.tat, orgs: compact(state) } });
    return true;
  }
}

/** An item as read raw (DynamoDB's attribute values), numbers as they are; a missing or unversioned one is version 0. */
function seenOf(item: Record<string, AttributeValue> | undefined): Seen {
  const raw = plainNumbers(item ? unmarshall(item, { wrapNumbers: true }) : {}) as { v?: unknown };
  const version = Number(raw.v);
  return { version: Number.isSafeInteger(version) ? version : 0, raw };
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
