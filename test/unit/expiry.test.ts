import { describe, expect, it } from '@jest/globals';
import { hasExpired, parseExpiration } from '../../functions/send/expiry';

describe('parseExpiration', () => {
  it('reads the instant as UTC', () => {
    expect(parseExpiration('2026-03-01 13:45:07')).toBe(Date.UTC(2026, 2, 1, 13, 45, 7));
  });

  it.each([
    ['2026-02-30 10:00:00', 'no 30 February'],
    ['2025-02-29 10:00:00', 'not a leap year'],
    ['2026-04-31 10:00:00', 'April has 30 days'],
    ['2026-01-01 24:00:00', 'hour 24'],
    ['2026-01-01 12:60:00', 'minute 60'],
    ['2026-01-01 12:00:60', 'second 60'],
    ['2026-13-01 12:00:00', 'month 13'],
    ['2026-00-10 12:00:00', 'month 0'],
    ['2026-01-01T12:00:00', 'RFC 3339 shape without an offset'],
    ['2026-01-01 12:00:00.5', 'fractional seconds without an offset'],
    ['2026-01-01T12:00:00+0200', 'offset without its colon'],
    ['2026-01-01T12:00:00+2:00', 'one-digit offset hour'],
    ['2026-01-01T12:00:00+24:00', 'offset hour 24'],
    ['2026-01-01T12:00:00-05:60', 'offset minute 60'],
    ['2026-01-01T12:00:00 Z', 'space before the Z'],
    ['2026-01-01T12:00:00.Z', 'a dot without digits'],
    ['2026-01-01T12:00:00.1234567890Z', 'more than nine fraction digits'],
    ['2026-02-30T10:00:00Z', 'no 30 February, RFC 3339 shape'],
    ['2026-12-31T23:59:60Z', 'a leap second'],
    ['2026-01-01T24:00:00Z', 'hour 24, RFC 3339 shape'],
    ['2026-01-01', 'a date alone'],
    ['2026-01-01T12:00Z', 'no seconds'],
    ['2026-1-01 12:00:00', 'one-digit month'],
    ['2026-01-01 2:00:00', 'one-digit hour'],
    [' 2026-01-01 12:00:00', 'leading space'],
  ])('rejects %s (%s)', (value) => {
    expect(parseExpiration(value)).toBeUndefined();
  });

  it('reads years 0000-0099 as themselves, not as 1900-1999', () => {
    const instant = parseExpiration('0050-06-15 00:00:00');
    expect(instant).toBeDefined();
    expect(new Date(instant!).getUTCFullYear()).toBe(50);
    expect(parseExpiration('0000-01-01 00:00:00')).toBeDefined();
  });

  it.each([
    ['2026-12-01T08:00:00Z', Date.UTC(2026, 11, 1, 8)],
    ['2026-12-01t08:00:00z', Date.UTC(2026, 11, 1, 8)],
    ['2026-12-01 08:00:00Z', Date.UTC(2026, 11, 1, 8)],
    ['2026-12-01T10:00:00+02:00', Date.UTC(2026, 11, 1, 8)],
    ['2026-12-01T03:30:00-04:30', Date.UTC(2026, 11, 1, 8)],
    ['2026-12-01T08:00:00-00:00', Date.UTC(2026, 11, 1, 8)],
    ['2026-12-01T08:00:00.250Z', Date.UTC(2026, 11, 1, 8, 0, 0, 250)],
    ['2026-12-01T08:00:00.5+00:00', Date.UTC(2026, 11, 1, 8, 0, 0, 500)],
    ['2026-12-01T08:00:00.999999999Z', Date.UTC(2026, 11, 1, 8, 0, 0, 999)],
    ['2027-01-01T01:00:00+02:00', Date.UTC(2026, 11, 31, 23)],
    ['2026-12-31T23:30:00-01:00', Date.UTC(2027, 0, 1, 0, 30)],
  ])('reads RFC 3339 %s as its instant', (value, instant) => {
    expect(parseExpiration(value)).toBe(instant);
  });

  it('accepts 29 February in a leap year', () => {
    expect(parseExpiration('2028-02-29 23:59:59')).toBe(Date.UTC(2028, 1, 29, 23, 59, 59));
  });
});

describe('hasExpired', () => {
  const at = Date.UTC(2026, 0, 1);
  it('is false without an expiry', () => expect(hasExpired(undefined, at)).toBe(false));
  it('is true at the instant itself', () => expect(hasExpired(at, at)).toBe(true));
  it('is false one millisecond before', () => expect(hasExpired(at, at - 1)).toBe(false));
});
