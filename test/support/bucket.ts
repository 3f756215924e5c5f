/**
 * SES's own limit as a client sees it: a bucket of `burst` recipients (one second's worth)
 * refilled at `rate` per second. True if every send at these times would have been accepted.
 */
export function fitsBucket(times: readonly number[], rate: number, burst = Math.max(1, Math.floor(rate))): boolean {
  let tokens = burst;
  const sorted = [...times].sort((a, b) => a - b);
  let last = sorted[0] ?? 0;
  for (const t of sorted) {
    tokens = Math.min(burst, tokens + ((t - last) * rate) / 1_000);
    last = t;
    if (tokens < 1 - 1e-6) return false;
    tokens -= 1;
  }
  return true;
}
