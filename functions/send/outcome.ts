/**
 * The response status for a set of message results (CONTRACT section 5). A `Scheduled` message
 * counts as a success, as `Sent` does (section 13).
 */
import { FAILURE_CODES } from '../shared/mail/ports';
import type { MessageResult } from './sending';

export interface Outcome {
  readonly statusCode: 200 | 207 | 429 | 502;
  readonly headers: Readonly<Record<string, string>>;
}

/** Seconds a client should wait after a 429, by failure code. */
const RETRY_AFTER_SECONDS: Partial<Record<string, number>> = { Throttled: 1, QuotaExceeded: 60 };

/**
 * `budgetRoomInSeconds`: when the account's send rate has room again, if some message did not get
 * a turn; then `Retry-After` says so, on a 207 as well as on a 429.
 */
export function decideOutcome(results: readonly MessageResult[], budgetRoomInSeconds?: number): Outcome {
  const failures = results.flatMap((result) => (result.Status === 'Failed' ? [result.Error.Code] : []));
  if (failures.length === 0) return { statusCode: 200, headers: {} };
  const throttled = failures.filter((code) => FAILURE_CODES[code].throttling);
  const wait = Math.max(budgetRoomInSeconds ?? 0, ...throttled.map((code) => RETRY_AFTER_SECONDS[code] ?? 1));
  if (results.some((result) => result.Status === 'Sent' || result.Status === 'Scheduled')) {
    return { statusCode: 207, headers: budgetRoomInSeconds !== undefined && throttled.length > 0 ? { 'Retry-After': String(wait) } : {} };
  }
  if (throttled.length === failures.length) return { statusCode: 429, headers: { 'Retry-After': String(wait) } };
  return { statusCode: 502, headers: {} };
}
