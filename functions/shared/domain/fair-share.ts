/**
 * Fair share of the account's send rate between Organizations (CONTRACT section 11, item 1).
 *
 * What it guarantees
 * - SES is never sent more than the account's rate: every recipient still takes the next turn of
 *   the one account schedule (GCRA, domain/send-pace.ts), in the order the turns were booked, so
 *   the turns never overlap and never leave gaps while someone books.
 * - No one books the account far ahead: a booking ends at most `HORIZON_MS` from now. A request
 *   books in rounds, each one conditional write on the shared state, as its turns come near, so
 *   a newcomer finds at most one horizon of other people's mail ahead of it.
 * - Within the horizon, an Organization with mail waiting may hold at most its share of the turns:
 *   the account's rate split by weight between the Organizations that have mail waiting, capped
 *   by an Organization's own rate limit with what a cap leaves over going to the others
 *   (weighted max-min fairness, "water-filling"). One Organization alone holds all of it.
 * - Work-conserving: when the account has less than `NEAR_MS` booked ahead, its next turns would
 *   go unused, so they go to whoever asks, whatever its share; the rate is never left idle while
 *   mail waits just because a waiting Organization's next round has not come yet.
 * - An Organization's own rate is a hard cap: beside the share, its own GCRA (its `tat` in its
 *   entry) must also allow each turn. That schedule only refuses account turns, never books one
 *   out of the account's order, so it cannot make the account overshoot; a refused message waits
 *   for the moment its own rate allows, and turns nobody takes stay free for the others.
 *
 * Which known design it is: hierarchical rate limiting, the account's bucket over per-tenant
 * quotas, with the per-tenant part kept as a count of held turns inside a sliding window (a
 * "quota per horizon", as in deficit round robin's quantum per round) rather than a second bucket,
 * because a second GCRA booked out of time order would let the combined rate overshoot. It is
 * the Amazon Builders' Library's "fairness in multi-tenant systems" advice made concrete: each
 * tenant gets its share when it contends, and all of the rest when it does not.
 *
 * What it costs: the state is one item (the account's TAT plus one small entry per Organization
 * with turns still ahead or mail waiting), written once per round. A request makes one round per
 * half horizon it spends sending, so about `1 + seconds sending` writes, not one per message, and
 * a request that fits in one horizon makes one. Expired messages book nothing.
 *
 * The arithmetic is pure, here; the store (store/dynamodb-send-budget.ts) only reads the state,
 * runs `bookRound` and writes the result back on condition that nobody wrote in between.
 */
import type { BudgetState, Holding, OrgEntry } from './budget-state';
import { HORIZON_MS } from './budget-state';
import type { Pace } from './send-pace';
import { earliestUnder, paceFor, tatAfter, unitSendTime } from './send-pace';

export type { BudgetState, Holding, OrgEntry } from './budget-state';
export { EMPTY_STATE, HORIZON_MS, sanitize } from './budget-state';

/** When the account has less than this booked ahead, its next turns go to whoever asks (they would otherwise go unused). */
export const NEAR_MS = 250;
/** Rounds of one request are at least this far apart (writes on the shared item stay few). */
export const MIN_ROUND_GAP_MS = 200;
export interface MessageAsk {
  /** Recipients, as SES counts them. */
  readonly units: number;
  readonly expiresAt?: number | undefined;
}

export interface RoundAsk {
  readonly organizationId: string;
  readonly weight: number;
  readonly cap?: number | undefined;
  /** The account's pace; undefined when the account's rate is unknown (then only `cap` paces). */
  readonly pace: Pace | undefined;
  /** The request's messages still without a turn, in request order. */
  readonly messages: readonly MessageAsk[];
  readonly now: number;
  /** No turn may come later than this (the request's deadline less the time a call takes). */
  readonly lastSendAt: number;
  /** Shards the account's budget is split over (budget-shards.ts, from the account's full rate); absent or 1: one item. */
  readonly shards?: number;
}

/** A message's turn (epoch ms), or `expired`: its expiry comes before its turn, so it books nothing. */
export type Turn = number | 'expired';

export interface Round {
  readonly state: BudgetState;
  /** Turns of the first `turns.length` messages asked. */
  readonly turns: readonly Turn[];
  /**
   * `done`: every message has a turn. `wait`: book again at `at`. `deadline`: the rest cannot go
   * before `lastSendAt`; `at` is when the budget has room again.
   */
  readonly stop: 'done' | 'wait' | 'deadline';
  readonly at: number;
  /** What this round booked, if anything (to give back what ends unused). */
  readonly holding: Holding | undefined;
  /** The shard it was booked on, when the budget is split. */
  readonly shard?: number;
}

/**
 * Each contending Organization's rate: the account's `rate` split by weight, no one above its own
 * cap, and what the caps leave over split again between the others (water-filling).
 */
export function fairRates(contenders: Readonly<Record<string, { weight: number; cap?: number | undefined }>>, rate: number): Map<string, number> {
  const rates = new Map<string, number>();
  let open = Object.keys(contenders);
  let left = rate;
  for (;;) {
    const weights = open.reduce((sum, id) => sum + contenders[id]!.weight, 0);
    if (open.length === 0 || weights <= 0) break;
    const capped = open.filter((id) => {
      const cap = contenders[id]!.cap;
      return cap !== undefined && cap < (left * contenders[id]!.weight) / weights;
    });
    if (capped.length === 0) {
      for (const id of open) rates.set(id, (left * contenders[id]!.weight) / weights);
      break;
    }
    for (const id of capped) {
      const cap = contenders[id]!.cap!;
      rates.set(id, cap);
      left -= cap;
    }
    open = open.filter((id) => !capped.includes(id));
  }
  return rates;
}

/** Units of these holdings still ahead of `now` (each holding's units spread evenly over its span). */
export function heldAhead(held: readonly Holding[], now: number): number {
  return held.reduce((sum, { from, to, units }) => {
    if (to < now) return sum;
    if (from >= now || to === from) return sum + units;
    return sum + Math.ceil((units * (to - now)) / (to - from));
  }, 0);
}

/**
 * One round of booking for one request: as many of its messages as fit in the horizon and in its
 * Organization's share, in request order.
 */
export function bookRound(state: BudgetState, ask: RoundAsk): Round {
  const { now, organizationId: id } = ask;
  if (!ask.pace && ask.cap === undefined) return { state, turns: ask.messages.map(() => now), stop: 'done', at: now, holding: undefined };
  const mine = state.orgs[id];
  const contenders = Object.fromEntries(Object.entries(state.orgs).filter(([other, entry]) => other !== id && entry.activeUntil >= now));
  contenders[id] = { weight: ask.weight, activeUntil: now, held: [], ...(ask.cap !== undefined && { cap: ask.cap }) };

  // The schedule turns come from: the account's, or (rate unknown) the Organization's own cap.
  const accountPace = ask.pace;
  const pace = accountPace ?? paceFor(ask.cap!);
  let tat = accountPace ? state.tat : (mine?.tat ?? 0);
  // Under the account's schedule, the Organization's own rate is a second GCRA that only ever
  // refuses a turn (never books one out of the account's order): a hard cap, whatever the share.
  const capPace = accountPace && ask.cap !== undefined ? paceFor(ask.cap) : undefined;
  let ownTat = mine?.tat ?? 0;
  const rate = accountPace ? 1_000 / accountPace.intervalMs : (ask.cap ?? 0);
  const myRate = accountPace ? (fairRates(contenders, rate).get(id) ?? rate) : rate;
  const share = Math.max(1, Math.round((myRate * HORIZON_MS) / 1_000));
  const heldBefore = heldAhead(mine?.held ?? [], now);
  let allowance = share - heldBefore;

  const turns: Turn[] = [];
  let stop: Round['stop'] = 'done';
  let at = now;
  let first: number | undefined;
  let last: number | undefined;
  let booked = 0;
  for (const message of ask.messages) {
    const start = Math.max(tat, now);
    const firstAt = unitSendTime(start, 0, pace, now);
    const turn = unitSendTime(start, message.units - 1, pace, now);
    if (turn > ask.lastSendAt) {
      stop = 'deadline';
      at = Math.max(now, firstAt);
      break;
    }
    if (message.expiresAt !== undefined && message.expiresAt <= turn) {
      turns.push('expired');
      continue;
    }
    const ownFrom = capPace ? earliestUnder(ownTat, message.units, capPace, now) : turn;
    if (ownFrom > turn) {
      // Too soon for its own rate: wait for it rather than leave a gap in the account's schedule.
      stop = ownFrom > ask.lastSendAt ? 'deadline' : 'wait';
      at = Math.max(now + MIN_ROUND_GAP_MS, ownFrom);
      break;
    }
    const beyondHorizon = booked > 0 ? turn > now + HORIZON_MS : firstAt > now + HORIZON_MS;
    if (beyondHorizon) {
      stop = 'wait';
      at = Math.max(now + MIN_ROUND_GAP_MS, firstAt - HORIZON_MS / 2);
      break;
    }
    // Over its share: only turns about to go unused, or a message bigger than the whole share
    // when the Organization holds nothing ahead (it could never go otherwise).
    const overShare = message.units > allowance;
    const unusedOtherwise = start <= now + NEAR_MS;
    const tooBigForAnyShare = booked === 0 && heldBefore === 0 && message.units > share;
    if (overShare && !unusedOtherwise && !tooBigForAnyShare) {
      stop = 'wait';
      // Room comes back as the turns it holds are spent, one every 1/myRate seconds: come back
      // when half its share is free again, so that a round books a useful number of turns.
      const needed = message.units - Math.max(0, allowance) + share / 2;
      at = now + Math.max(MIN_ROUND_GAP_MS, (needed * 1_000) / Math.max(myRate, 1e-9));
      break;
    }
    tat = start + message.units * pace.intervalMs;
    if (capPace) ownTat = tatAfter(ownTat, message.units, capPace, turn, now);
    allowance -= message.units;
    booked += message.units;
    first ??= firstAt;
    last = turn;
    turns.push(turn);
  }

  const waiting = stop !== 'done';
  const held = [...(mine?.held ?? []).filter((h) => h.to >= now), ...(booked > 0 ? [{ from: first!, to: last!, units: booked }] : [])];
  const entry: OrgEntry = {
    weight: ask.weight,
    ...(ask.cap !== undefined && { cap: ask.cap }),
    // Still waiting: its share is kept for it until its next round. Done: until its last turn,
    // and no longer, so the others have the whole rate back at once (another request of the
    // same Organization that still waits claims its share again at its next round).
    activeUntil: waiting && stop === 'wait' ? Math.max(mine?.activeUntil ?? 0, now + HORIZON_MS) : Math.max(now, last ?? 0),
    held,
    ...(!accountPace ? { tat } : capPace && ownTat > now && { tat: ownTat }),
  };
  return {
    state: { tat: accountPace ? tat : state.tat, orgs: { ...state.orgs, [id]: entry } },
    turns,
    stop,
    at,
    holding: booked > 0 ? { from: first!, to: last!, units: booked } : undefined,
  };
}

/** Turns of one round that ended unused. */
export interface Release {
  readonly organizationId: string;
  /** The round's holding, as booked. */
  readonly holding: Holding;
  /** How many of its units were not used. */
  readonly unused: number;
  /** The account's TAT just after the round: if it is still that, nobody booked after it. */
  readonly tatAfter: number;
  /** The shard the round was booked on, when the budget is split. */
  readonly shard?: number | undefined;
}

/**
 * Gives back turns booked but not used (their messages ended without being sent): the
 * Organization's share is freed at once, and the account's schedule too when nobody booked
 * after them (otherwise those turns were only ever at most one horizon ahead, and pass).
 */
export function releaseTurns(state: BudgetState, release: Release, pace: Pace | undefined, now: number): BudgetState {
  const { organizationId, holding, unused, tatAfter } = release;
  const mine = state.orgs[organizationId];
  if (!mine || unused <= 0) return state;
  let released = false;
  const held = mine.held.flatMap((h) => {
    if (released || h.from !== holding.from || h.to !== holding.to) return [h];
    released = true;
    const units = h.units - Math.min(unused, h.units);
    return units > 0 ? [{ ...h, units }] : [];
  });
  if (!released) return state;
  const span = pace ? unused * pace.intervalMs : 0;
  const tat = pace !== undefined && state.tat === tatAfter ? Math.max(now, state.tat - span) : state.tat;
  return { tat, orgs: { ...state.orgs, [organizationId]: { ...mine, held } } };
}
