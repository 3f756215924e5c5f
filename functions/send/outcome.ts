/**
 * The response status for a set of message results. A `Scheduled` message counts as a success,
 * as `Sent` does. When nothing was sent, the status says who is at fault: the account's rate
 * (429), the request itself (422: resending it unchanged cannot help, and a 5xx would read as an
 * outage of the service to clients and alarms), or SES or the service (502).
 */
import { FAILURE_CODES } from '../shared/mail/ports';
import type { MessageResult } from './sending';

export interface Outcome {
  readonly statusCode: 200 | 207 | 422 | 429 | 502;
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * Failures the request alone caused: every recipient suppressed, SES refusing the message as
 * composed, or a sender identity SES has not verified.
 */
export const REQUEST_AT_FAULT: ReadonlySet<string> = new Set(['Suppressed', 'MessageRejected', 'SenderNotVerified']);

/** Seconds a client should wait after a 429, by failure code, when nothing more exact is known. */
const RETRY_AFTER_SECONDS: Partial<Record<string, number>> = { Throttled: 1, QuotaExceeded: 60 };
/** No answer ever asks a client to wait longer than a day (the daily quota's period). */
export const MAX_RETRY_AFTER_SECONDS = 86_400;

/** A whole number of seconds, at least 1 and at most a day, whatever the arithmetic before it gave. */
export function retryAfterSeconds(seconds: number): number {
  if (!Number.isFinite(seconds)) return seconds > 0 ? MAX_RETRY_AFTER_SECONDS : 1;
  return Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, Math.ceil(seconds)));
}

/** The Organization's own daily quota, when it refused messages of the request. */
export interface QuotaRefusal {
  /** When it resets. */
  readonly resetInSeconds: number;
  /** How many messages it refused (each a `QuotaExceeded` result). */
  readonly refused: number;
}

/**
 * `budgetRoomInSeconds`: when the account's send rate has room again, if some message did not get
 * a turn; `quota`: when the Organization's daily quota resets, if it refused some message.
 * `Retry-After` says the latest of what the failures need, on a 207 as well as on a 429.
 */
export function decideOutcome(results: readonly MessageResult[], budgetRoomInSeconds?: number, quota?: QuotaRefusal): Outcome {
  const failures = results.flatMap((result) => (result.Status === 'Failed' ? [result.Error.Code] : []));
  if (failures.length === 0) return { statusCode: 200, headers: {} };
  const throttled = failures.filter((code) => FAILURE_CODES[code].throttling);
  const known = [budgetRoomInSeconds, quota?.resetInSeconds].filter((seconds): seconds is number => seconds !== undefined);
  // The reset itself for the Organization's quota, even in its last minute (a fixed minute would
  // point past it); the fixed wait for a QuotaExceeded of another cause (SES's own quota, the
  // limit of scheduled messages), whose end is not known here.
  const otherQuota = throttled.filter((code) => code === 'QuotaExceeded').length > (quota?.refused ?? 0);
  const exact: Partial<Record<string, number>> = { Throttled: budgetRoomInSeconds, ...(!otherQuota && { QuotaExceeded: quota?.resetInSeconds }) };
  const wait = retryAfterSeconds(Math.max(...known, ...throttled.map((code) => exact[code] ?? RETRY_AFTER_SECONDS[code] ?? 1)));
  if (results.some((result) => result.Status === 'Sent' || result.Status === 'Scheduled')) {
    return { statusCode: 207, headers: known.length > 0 && throttled.length > 0 ? { 'Retry-After': String(wait) } : {} };
  }
  if (throttled.length === failures.length) return { statusCode: 429, headers: { 'Retry-After': String(wait) } };
  if (failures.every((code) => REQUEST_AT_FAULT.has(code))) return { statusCode: 422, headers: {} };
  return { statusCode: 502, headers: {} };
}
