/**
 * The account's send rate as a schedule (CONTRACT section 7), by the generic cell rate algorithm
 * in its "virtual scheduling" form: the whole budget is one number, the theoretical arrival time
 * (TAT) of the next recipient. A recipient may go at `TAT - tolerance`; each one pushes TAT on by
 * one interval. So an idle account lets a burst of `burst` recipients go at once, and from then
 * on one every `intervalMs`: exactly what a token bucket of `burst` tokens refilled at `rate` per
 * second allows, but kept as a single value that one conditional write can move.
 *
 * A unit is one recipient, as SES counts them: a message to 3 recipients costs 3.
 */

export interface Pace {
  /** Milliseconds between two recipients at the full rate. */
  readonly intervalMs: number;
  /** How far ahead of TAT a recipient may go: what lets an idle account send a burst. */
  readonly toleranceMs: number;
}

/**
 * Kept back from the burst SES allows (one second's worth): calls leave a little later than
 * their turn (event loop, connection pool), and a burst that ends late followed by a call on
 * time would look like two calls too close together. 100 ms of slack absorbs that jitter.
 */
export const SLACK_MS = 100;

export function paceFor(ratePerSecond: number): Pace {
  const intervalMs = 1_000 / ratePerSecond;
  const burst = Math.max(1, Math.floor(ratePerSecond));
  return { intervalMs, toleranceMs: Math.max(0, (burst - 1) * intervalMs - SLACK_MS) };
}

/** When unit `k` of a reservation that starts at `start` (the TAT it found) may be sent. */
export function unitSendTime(start: number, k: number, pace: Pace, now: number): number {
  return Math.max(now, start + k * pace.intervalMs - pace.toleranceMs);
}

/**
 * A schedule that only ever refuses (an Organization's own rate under the account's): the
 * earliest a message of `units` recipients may go, given that schedule's TAT.
 */
export function earliestUnder(tat: number, units: number, pace: Pace, now: number): number {
  return unitSendTime(Math.max(tat, now), units - 1, pace, now);
}

/** That schedule's TAT once a message of `units` recipients went at `turn` (at or after `earliestUnder`). */
export function tatAfter(tat: number, units: number, pace: Pace, turn: number, now: number): number {
  return Math.max(Math.max(tat, now) + units * pace.intervalMs, turn + pace.intervalMs);
}
