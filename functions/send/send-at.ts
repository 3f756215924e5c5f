/**
 * `SendAt`: when a message is to go, in `ExpirationDateTime`'s shapes and reading
 * (`YYYY-MM-DD HH:MM:SS` as UTC, or RFC 3339 with an offset; expiry.ts parses both). At most `MAX_SCHEDULE_DAYS` ahead,
 * and earlier than the message's own expiry: a message that would expire before it is sent can
 * only ever be `Expired`, which the client is better told now. A time already past is no
 * schedule: the message goes at once, as without it.
 */
import { ILL_FORMED } from '../shared/http/body-rules';
import type { ProblemList } from '../shared/http/body-rules';
import { isWellFormedText } from '../shared/domain/unicode';
import { parseExpiration, TIME_FORMAT_RULE } from './expiry';

const DAY_MS = 24 * 60 * 60 * 1_000;

export interface SendAtRules {
  /** Epoch ms of the request. */
  readonly now: number;
  readonly maxScheduleDays: number;
}

/** Epoch ms of a valid `SendAt`, or undefined (absent, or a problem added at `pointer`). */
export function readSendAt(value: unknown, pointer: string, problems: ProblemList, expiresAt: number | undefined, rules: SendAtRules): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string' && !isWellFormedText(value)) {
    problems.add(pointer, ILL_FORMED);
    return undefined;
  }
  const sendAt = typeof value === 'string' ? parseExpiration(value) : undefined;
  if (sendAt === undefined) {
    problems.add(pointer, TIME_FORMAT_RULE);
    return undefined;
  }
  if (sendAt > rules.now + rules.maxScheduleDays * DAY_MS) {
    problems.add(pointer, `must be at most ${rules.maxScheduleDays} days ahead (MAX_SCHEDULE_DAYS)`);
    return undefined;
  }
  if (expiresAt !== undefined && sendAt >= expiresAt) {
    problems.add(pointer, 'must be earlier than the message\'s ExpirationDateTime');
    return undefined;
  }
  return sendAt;
}

/** Whether a message is to wait for its time rather than go now. */
export function isScheduled(sendAt: number | undefined, now: number): sendAt is number {
  return sendAt !== undefined && sendAt > now;
}
