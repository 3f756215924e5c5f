/**
 * `ExpirationDateTime`: exactly `YYYY-MM-DD HH:MM:SS`, a real calendar instant, read as UTC.
 * A message whose instant has passed when its turn to be sent comes is reported `Expired`.
 */
const SHAPE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

/** Epoch milliseconds of the instant, or undefined when the string is not a real one. */
export function parseExpiration(value: string): number | undefined {
  const match = SHAPE.exec(value);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number) as [number, number, number, number, number, number];
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0-99 as 1900-1999.
  const back = new Date(0);
  back.setUTCFullYear(year, month - 1, day);
  back.setUTCHours(hour, minute, second, 0);
  const instant = back.getTime();
  // Dates roll over (2026-02-30 becomes 2 March); a real date survives the round trip unchanged.
  const real =
    back.getUTCFullYear() === year &&
    back.getUTCMonth() === month - 1 &&
    back.getUTCDate() === day &&
    back.getUTCHours() === hour &&
    back.getUTCMinutes() === minute &&
    back.getUTCSeconds() === second;
  return real ? instant : undefined;
}

export function hasExpired(expiresAt: number | undefined, now: number): boolean {
  return expiresAt !== undefined && expiresAt <= now;
}
