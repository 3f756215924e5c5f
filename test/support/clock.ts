/**
 * For tests that read the clock twice and expect the same UTC hour or day both times (a key's
 * hour of last use, a daily quota's day): started a few seconds before the hour or the day turns,
 * such a test would fail by chance, so it first waits until the turn has passed.
 */

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/** Resolves at once, or, when the next turn of `periodMs` (UTC) is less than `marginMs` away, just after it. */
export async function clearOfTurn(periodMs: number, marginMs: number): Promise<void> {
  const untilTurn = periodMs - (Date.now() % periodMs);
  if (untilTurn < marginMs) await new Promise((resolve) => setTimeout(resolve, untilTurn + 50));
}
