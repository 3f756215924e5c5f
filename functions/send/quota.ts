/**
 * An Organization's daily quota (CONTRACT section 11, item 2): recipients per UTC day. Messages are
 * taken against it in request order before anything is sent; those that do not fit are not sent
 * (`Failed: QuotaExceeded`, retryable, `Retry-After` naming the reset at 00:00 UTC), and what was
 * taken but not sent is given back at the end. An Organization without a quota costs nothing here.
 * With a quota, every send answer says where it stands in the IETF RateLimit header fields
 * (draft-ietf-httpapi-ratelimit-headers): `RateLimit-Policy: "daily";q=<quota>;w=86400` and
 * `RateLimit: "daily";r=<remaining>;t=<seconds to the reset>`.
 */
import { nextUtcMidnight, utcDay } from '../shared/domain/org-limits';
import type { DailyUsage, OrganizationAccess } from '../shared/store/ports';
import { hasExpired } from './expiry';
import type { MessageResult } from './sending';
import { failed, recipientsOf, withSuppressed } from './sending';
import type { ValidMessage } from '../shared/mail/valid-message';

export interface DailyQuota {
  readonly limit: number;
  readonly day: string;
  readonly resetAt: number;
  /** Messages taken against the quota, by index, with their recipients. */
  readonly taken: ReadonlyMap<number, number>;
  /** Results of the messages refused for the quota. */
  readonly refused: ReadonlyMap<number, MessageResult>;
  used: number;
}

/** Failure codes after which a message certainly never reached SES: its units are given back. */
const NOT_SENT = new Set(['Throttled', 'DeadlineExceeded', 'StorageUnavailable', 'Suppressed', 'MessageRejected', 'BadRequest', 'NotFound', 'SendingPaused', 'AccountSuspended', 'MailFromDomainNotVerified', 'SenderNotVerified', 'QuotaExceeded', 'SesUnavailable', 'SendFailed']);

/** The Organization's quota for the UTC day of `now`, or undefined when it has none. */
function quotaOn(organization: OrganizationAccess, now: number): Pick<DailyQuota, 'limit' | 'day' | 'resetAt'> | undefined {
  const limit = organization.limits?.daily;
  return limit === undefined ? undefined : { limit, day: utcDay(now), resetAt: nextUtcMidnight(now) };
}

export async function takeDailyQuota(messages: readonly ValidMessage[], organization: OrganizationAccess, usage: DailyUsage, now: number): Promise<DailyQuota | undefined> {
  const quota = quotaOn(organization, now);
  if (quota === undefined) return undefined;
  const { limit, day, resetAt } = quota;
  // Already expired: reported Expired by the sending, and they take nothing of the quota.
  const live = messages.filter((message) => !hasExpired(message.expiresAt, now));
  const { taken, used } = await usage.take(organization.organizationId, day, live.map(recipientsOf), limit);
  const detail = `The Organization's daily quota of ${limit} recipients is used up; it resets at 00:00 UTC (${new Date(resetAt).toISOString()}).`;
  return {
    ...quota,
    used,
    taken: new Map(live.slice(0, taken).map((message) => [message.index, recipientsOf(message)])),
    refused: new Map(live.slice(taken).map((message) => [message.index, withSuppressed(failed(message.index, 'QuotaExceeded', detail), message.suppressed)])),
  };
}

/**
 * Where the quota stands, taking nothing: a test-mode send counts towards no quota, and its answer
 * still carries the RateLimit fields, as every send answer does while there is a quota.
 */
export async function readDailyQuota(organization: OrganizationAccess, usage: DailyUsage, now: number): Promise<DailyQuota | undefined> {
  const quota = quotaOn(organization, now);
  return quota && { ...quota, used: await usage.used(organization.organizationId, quota.day), taken: new Map(), refused: new Map() };
}

/** Gives back what was taken for messages that were not sent; updates `quota.used`. */
export async function settleDailyQuota(quota: DailyQuota, organizationId: string, results: readonly MessageResult[], usage: DailyUsage): Promise<void> {
  let unsent = 0;
  for (const result of results) {
    const units = quota.taken.get(result.Index);
    if (units === undefined) continue;
    if (result.Status === 'Expired' || (result.Status === 'Failed' && NOT_SENT.has(result.Error.Code))) unsent += units;
  }
  if (unsent > 0) quota.used = await usage.giveBack(organizationId, quota.day, unsent);
}

/** The RateLimit header fields for the quota as it stands. */
export function rateLimitHeaders(quota: DailyQuota, now: number): Record<string, string> {
  const remaining = Math.max(0, quota.limit - quota.used);
  const reset = Math.max(0, Math.ceil((quota.resetAt - now) / 1_000));
  return { 'RateLimit-Policy': `"daily";q=${quota.limit};w=86400`, RateLimit: `"daily";r=${remaining};t=${reset}` };
}
