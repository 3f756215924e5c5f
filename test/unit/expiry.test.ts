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
    ['2026-01-01T12:00:00', 'ISO T separator'],
    ['2026-01-01 12:00:00Z', 'zone suffix'],
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
