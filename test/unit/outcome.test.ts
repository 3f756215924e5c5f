import { describe, expect, it } from '@jest/globals';
import { decideOutcome, retryAfterSeconds } from '../../functions/send/outcome';
import type { MessageResult } from '../../functions/send/sending';
import { failed } from '../../functions/send/sending';

const sent = (i: number): MessageResult => ({ Index: i, Status: 'Sent', MessageId: `m${i}` });
const expired = (i: number): MessageResult => ({ Index: i, Status: 'Expired' });

describe('decideOutcome', () => {
  it('is 200 when every message was sent or expired', () => {
    expect(decideOutcome([sent(0), expired(1)]).statusCode).toBe(200);
    expect(decideOutcome([expired(0)]).statusCode).toBe(200);
  });

  it('is 207 when some were sent and some failed', () => {
    expect(decideOutcome([sent(0), failed(1, 'MessageRejected')]).statusCode).toBe(207);
    expect(decideOutcome([sent(0), failed(1, 'Throttled')]).statusCode).toBe(207);
  });

  it('is 429 with Retry-After when nothing was sent and every failure is throttling', () => {
    const outcome = decideOutcome([failed(0, 'Throttled'), expired(1), failed(2, 'Throttled')]);
    expect(outcome).toEqual({ statusCode: 429, headers: { 'Retry-After': '1' } });
    expect(decideOutcome([failed(0, 'Throttled'), failed(1, 'QuotaExceeded')]).headers['Retry-After']).toBe('60');
  });

  it('is 422 with no Retry-After when nothing was sent and the request alone is at fault', () => {
    expect(decideOutcome([failed(0, 'Suppressed')])).toEqual({ statusCode: 422, headers: {} });
    expect(decideOutcome([failed(0, 'MessageRejected'), expired(1), failed(2, 'Suppressed')])).toEqual({ statusCode: 422, headers: {} });
    expect(decideOutcome([{ Index: 0, Status: 'Failed', Error: { Code: 'SenderNotVerified', Message: 'm', Retryable: false } } as unknown as MessageResult]).statusCode).toBe(422);
  });

  it('is 502 when nothing was sent and any failure is neither throttling nor the request\'s fault', () => {
    expect(decideOutcome([failed(0, 'Throttled'), failed(1, 'MessageRejected')]).statusCode).toBe(502);
    expect(decideOutcome([failed(0, 'Suppressed'), failed(1, 'SesUnavailable')]).statusCode).toBe(502);
    expect(decideOutcome([failed(0, 'MessageRejected'), failed(1, 'MailFromDomainNotVerified')]).statusCode).toBe(502);
    expect(decideOutcome([failed(0, 'DeadlineExceeded')]).statusCode).toBe(502);
    expect(decideOutcome([failed(0, 'SesUnavailable')]).headers).toEqual({});
  });

  it('names the daily quota reset in Retry-After when a message was refused for it, on a 207 and a 429', () => {
    expect(decideOutcome([sent(0), failed(1, 'QuotaExceeded')], undefined, { resetInSeconds: 3_600.2, refused: 1 }).headers['Retry-After']).toBe('3601');
    expect(decideOutcome([failed(0, 'QuotaExceeded')], undefined, { resetInSeconds: 40_000, refused: 1 })).toEqual({ statusCode: 429, headers: { 'Retry-After': '40000' } });
  });

  it('names the reset in its last minute too, not a fixed minute that would point past it', () => {
    expect(decideOutcome([failed(0, 'QuotaExceeded')], undefined, { resetInSeconds: 24.5, refused: 1 })).toEqual({ statusCode: 429, headers: { 'Retry-After': '25' } });
    expect(decideOutcome([sent(0), failed(1, 'QuotaExceeded')], undefined, { resetInSeconds: 0.2, refused: 1 }).headers['Retry-After']).toBe('1');
    // Throttled as well: the later of the two still wins.
    expect(decideOutcome([failed(0, 'Throttled'), failed(1, 'QuotaExceeded')], 3, { resetInSeconds: 24.5, refused: 1 }).headers['Retry-After']).toBe('25');
    // A QuotaExceeded of another cause beside it (SES's own quota): its fixed minute, the later.
    expect(decideOutcome([failed(0, 'QuotaExceeded'), failed(1, 'QuotaExceeded')], undefined, { resetInSeconds: 24.5, refused: 1 }).headers['Retry-After']).toBe('60');
  });

  it('always says a whole number of seconds, at least 1 and at most a day, whatever the budget said', () => {
    expect(decideOutcome([failed(0, 'Throttled')], 1e27).headers['Retry-After']).toBe('86400');
    expect(decideOutcome([failed(0, 'Throttled')], Number.NaN).headers['Retry-After']).toBe('1');
    expect(decideOutcome([failed(0, 'Throttled')], 0.2).headers['Retry-After']).toBe('1');
    expect([retryAfterSeconds(-5), retryAfterSeconds(Number.POSITIVE_INFINITY), retryAfterSeconds(2.01)]).toEqual([1, 86_400, 3]);
  });
});
