/**
 * The account's send budget split over shards, so that it scales with Organizations and requests
 * (CONTRACT section 7 item 5): no item on the send path written more than 300 times a second or
 * larger than 4 KB at 10,000 Organizations and 1,000 one-message requests a second.
 *
 * What it is
 * - `shardCount(R)` budget shards, each a whole fair-share budget (fair-share.ts, unchanged) at
 *   `R / S` recipients per second with a burst of `⌊R / S⌋`. The union of S streams that each fit
 *   a bucket (b_i, r_i) fits the bucket (Σ b_i, Σ r_i) = (at most ⌊R⌋, R): SES's own. So however
 *   the shards are used, together they never send more than the account's rate.
 * - An instance books on a shard of its own (drawn once) while that shard has room now, with no
 *   read; otherwise on the one of it and a shard drawn at random with less booked ahead ("the
 *   power of two choices", Mitzenmacher 2001): load spreads evenly without any shard knowing the
 *   others, and a request that met a busy shard borrows the other's room. A request that needs
 *   more rounds draws again for each, so a flood spreads over every shard. (The store makes the
 *   choice from the state it last saw; its conditional write keeps a stale view from booking.)
 * - Each shard keeps at most `SHARD_ENTRIES` Organization entries, those waiting longest; shares
 *   are computed per shard between the Organizations it sees, and a flood that reaches every
 *   shard meets its share on each.
 * - An Organization with a rate of its own books on one home shard, the same on every instance
 *   (`homeShard`), whose entry keeps its own-rate schedule whole (fair-share.ts): sharding cannot
 *   multiply its cap. The price, kept on purpose (docs/fair-share.md): it never gets more than one
 *   shard's rate, `R / S`, and its share is computed between those waiting on that shard.
 *
 * What it costs at R = 1,000/s: 10 shards of 100/s. A one-message request writes one shard item
 * once (a conditional UpdateItem, well under 1 KB: 1 WCU); so 1,000 requests a second are about
 * 100 writes per shard per second. docs/fair-share.md has the table.
 */
import type { BudgetState } from './budget-state';
import type { Pace } from './send-pace';
import { paceFor } from './send-pace';

/** Recipients per second one shard carries: 100 writes a second at one message per request, a third of the 300 allowed. */
export const SHARD_RATE = 100;
/** Organization entries one shard keeps (about 100 bytes each): the item stays under 2 KB. */
export const SHARD_ENTRIES = 16;

/** How many shards an account rate is split over. */
export function shardCount(rate: number): number {
  return Math.max(1, Math.ceil(rate / SHARD_RATE));
}

/** Each shard's pace: `rate / S` per second, with a burst of at most ⌊rate / S⌋. */
export function shardPace(rate: number): Pace {
  return paceFor(rate / shardCount(rate));
}

/** An Organization's home shard: the same on every instance, from its id. */
export function homeShard(organizationId: string, shards: number): number {
  let hash = 0;
  for (const char of organizationId.toLowerCase()) hash = (Math.imul(hash, 31) + char.charCodeAt(0)) >>> 0;
  return hash % shards;
}

/**
 * Of two shards (the instance's own and one drawn at random), the one with less booked ahead (the earlier TAT); `first` on a
 * tie. Shards that cannot be read are left out; none left: undefined (the request cannot book).
 */
export function chooseShard(states: ReadonlyMap<number, BudgetState>, first: number, second: number): number | undefined {
  const a = states.get(first);
  const b = states.get(second);
  if (!a) return b ? second : undefined;
  if (!b) return first;
  return b.tat < a.tat ? second : first;
}
