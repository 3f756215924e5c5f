/**
 * The times a message may carry (`ExpirationDateTime`, `SendAt`), in either of two shapes:
 *
 * - `YYYY-MM-DD HH:MM:SS`, exactly, read as UTC (the original shape, kept as it was);
 * - RFC 3339 (section 5.6) with its offset: `2026-12-01T08:00:00Z`, `2026-12-01T10:00:00+02:00`,
 *   optional fractional seconds (at most nine digits, kept to the millisecond), `T`/`Z` in either
 *   case or a space for the `T`, offsets up to ±23:59 (`-00:00` is UTC too).
 *
 * Refused: an RFC 3339 time without an offset (whose zone only the client knows), an offset
 * without its colon (`+0200`), a leap second (`:60`, which no clock here can name), and any date
 * or time that does not exist (`2026-02-30`, `24:00:00`).
 */
const SHAPE = /^(\d{4})-(\d{2})-(\d{2})([Tt ])(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))?$/;

/** What a client is told when a time is neither shape. */
export const TIME_FORMAT_RULE = 'must be a real date and time: "YYYY-MM-DD HH:MM:SS" (UTC) or RFC 3339 with an offset ("2026-12-01T08:00:00Z", "…+02:00")';

/** Epoch milliseconds of the instant, or undefined when the string is not a real one. */
export function parseExpiration(value: string): number | undefined {
  const match = SHAPE.exec(value);
  if (!match) return undefined;
  const [, y, mo, d, separator, h, mi, s, fraction, zulu, sign, offsetHours, offsetMinutes] = match;
  const hasOffset = zulu !== undefined || sign !== undefined;
  // Without an offset, only the original shape: a space, whole seconds, UTC.
  if (!hasOffset && (separator !== ' ' || fraction !== undefined)) return undefined;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number) as [number, number, number, number, number, number];
  const local = calendarInstant(year, month, day, hour, minute, second);
  if (local === undefined) return undefined;
  const millis = fraction === undefined ? 0 : Math.floor(Number(`0.${fraction}`) * 1_000);
  if (sign === undefined) return local + millis;
  const [oh, om] = [Number(offsetHours), Number(offsetMinutes)];
  if (oh > 23 || om > 59) return undefined;
  return local + millis - (sign === '+' ? 1 : -1) * (oh * 60 + om) * 60_000;
}

/** Epoch ms of the wall-clock fields read as UTC, or undefined when they name no real instant. */
function calendarInstant(year: number, month: number, day: number, hour: number, minute: number, second: number): number | undefined {
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0-99 as 1900-1999.
  const back = new Date(0);
  back.setUTCFullYear(year, month - 1, day);
  back.setUTCHours(hour, minute, second, 0);
  // Dates roll over (2026-02-30 becomes 2 March); a real date survives the round trip unchanged.
  const real =
    back.getUTCFullYear() === year &&
    back.getUTCMonth() === month - 1 &&
    back.getUTCDate() === day &&
    back.getUTCHours() === hour &&
    back.getUTCMinutes() === minute &&
    back.getUTCSeconds() === second;
  return real ? back.getTime() : undefined;
}

export function hasExpired(expiresAt: number | undefined, now: number): boolean {
  return expiresAt !== undefined && expiresAt <= now;
}
