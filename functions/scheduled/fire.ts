/**
 * A scheduled message's time has come (CONTRACT section 13): send it as a fresh send would be,
 * or say why not. Plain function; the scheduled-send function (`handler.ts`) runs it for each
 * wake-up from its queue in AWS, and the local stack's timer (infra/local/local-scheduler.ts)
 * runs it in-process.
 *
 * 1. Read the schedule. Unknown or final (sent, cancelled …): nothing to do. Woken before it is
 *    due (a re-armed wait): arm its timer again for when it is.
 * 2. Claim it with a conditional write (a lease), so two wake-ups never both send it. A claim
 *    whose firing died before handing the message to SES is taken over when its lease lapses;
 *    one that died after (`InFlight`) ends `Failed: OutcomeUnknown`, never sent twice.
 * 3. The checks of a fresh send, against today's records: the key that made it is still its
 *    user's key (revoked or rotated away, the schedule died with it: `Cancelled`, never sent),
 *    the user is still a member of the Organization, its From still an allowed sender.
 * 4. `deliver` (functions/send/send-request.ts), the send endpoint's own pipeline: suppression,
 *    the account's pace and every other rule sending has, expiry checked at the message's turn.
 * 5. Record the outcome. `Sent`, `Expired` and permanent failures are final (and the last two are
 *    told to the webhook). A failure that waiting can cure (throttling, a quota, SES or the
 *    table unavailable, no turn before the deadline) puts the schedule back to `Scheduled`, due
 *    when the budget has room or after a backoff, and re-arms its timer: it waits, it is never
 *    dropped, until `MAX_WAIT_MS` after its `SendAt` (then it is `Failed`, and told).
 */
import type { KeyPolicy } from '../shared/domain/key-policy';
import { allowsScope, isExpired } from '../shared/domain/key-policy';
import { randomUUID } from 'node:crypto';
import type { Logger } from '@aws-lambda-powertools/logger';
import { authoriseOrganization } from '../shared/auth/caller';
import { OrganizationForbiddenProblem, OrganizationPausedProblem, SenderForbiddenProblem } from '../shared/http/problems';
import type { FailureCode } from '../shared/mail/ports';
import { FAILURE_CODES } from '../shared/mail/ports';
import type { ScheduleNotices } from '../shared/schedules/notices';
import { headEvent } from '../shared/schedules/notices';
import type { ScheduleError, ScheduleHead, ScheduleStore } from '../shared/schedules/schedule-store';
import type { ScheduleTimer } from '../shared/schedules/timer';
import type { OrganizationAccess } from '../shared/store/ports';
import { authoriseSenders, authoriseSending } from '../send/authorisation';
import { recordResults } from '../send/metrics';
import { MAX_WAIT_MS } from '../send/scheduling';
import type { SendDependencies } from '../send/send-request';
import { deliver } from '../send/send-request';
import type { MessageResult } from '../send/sending';
import { failed } from '../send/sending';
import type { ValidMessage } from '../shared/mail/valid-message';

export interface FireDependencies {
  /** The send endpoint's own dependencies (access, suppression, mailer, pacer …). */
  readonly send: SendDependencies;
  readonly schedules: ScheduleStore;
  readonly timer: ScheduleTimer;
  readonly notices: ScheduleNotices | undefined;
  readonly logger: Logger;
  readonly now: () => number;
}

export type Fired =
  | { readonly kind: 'done'; readonly state: ScheduleHead['state'] | 'Unknown' | 'Busy' }
  | { readonly kind: 'waiting'; readonly until: number };

/** A wake-up this close before the due time fires at once (timers run a little early or late). */
const EARLY_MS = 1_000;
/** A claim outlives the firing's deadline by this much before another may take it over. */
const LEASE_GRACE_MS = 5_000;
/** Failures that waiting can cure: the message has not been handed to SES, and may be later. */
// A paused Organization's scheduled mail waits for `org resume`, and mail SES refused while it had
// paused the Organization's tenant (or the account) for that pause to be lifted, within
// MAX_WAIT_MS, rather than failing at once.
const WAIT_CODES: ReadonlySet<FailureCode> = new Set(['Throttled', 'QuotaExceeded', 'SesUnavailable', 'DeadlineExceeded', 'StorageUnavailable', 'OrganizationPaused', 'SendingPaused']);
const BACKOFF_BASE_MS = 1_000;
const BACKOFF_CAP_MS = 5 * 60_000;

function errorOf(code: FailureCode): ScheduleError {
  return { Code: code, Message: FAILURE_CODES[code].message, Retryable: FAILURE_CODES[code].retryable };
}

/** `deadline`: epoch ms by which sending must be over (the invocation's time, less a margin). */
export async function fireSchedule(scheduleId: string, deadline: number, deps: FireDependencies): Promise<Fired> {
  const now = deps.now();
  const loaded = await deps.schedules.load(scheduleId);
  if (!loaded) return { kind: 'done', state: 'Unknown' };
  const { head, message } = loaded;
  // Cancelled where no webhook queue could be reached: its timer tells `email.cancelled`, once (a
  // redelivery finds it settled). Should the telling fail, the notice is owed again, for the
  // redelivered wake-up to tell.
  if (head.state === 'Cancelled' && head.noticeOwed && (await deps.schedules.settleNotice(scheduleId, now))) {
    await tell(head, 'Cancelled', deps).catch(async (error: unknown) => {
      await deps.schedules.oweNotice(scheduleId, now);
      throw error;
    });
  }
  if (!message) return { kind: 'done', state: head.state };

  if (head.state === 'Scheduled' && head.dueAt > now + EARLY_MS) return wait(head, head.dueAt, head.attempts, deps);
  if (head.state === 'Claimed' || head.state === 'InFlight') {
    const lease = head.leaseUntil ?? 0;
    // Another firing is at it: look again once its lease has lapsed.
    if (lease >= now) return wait(head, lease + EARLY_MS, head.attempts + 1, deps);
    if (head.state === 'InFlight') {
      const error = errorOf('OutcomeUnknown');
      if (await deps.schedules.finish(scheduleId, undefined, { state: 'Failed', error }, now)) await tell(head, 'Failed', deps, error);
      return { kind: 'done', state: 'Failed' };
    }
  }

  const claimId = randomUUID();
  if (!(await deps.schedules.claim(scheduleId, claimId, deadline + LEASE_GRACE_MS, now))) return { kind: 'done', state: 'Busy' };
  try {
    return await sendClaimed(head, message, claimId, deadline, deps);
  } catch (error) {
    // A fault of the table or the access store: give the claim back, due again after a backoff,
    // unless the message was already handed to SES (InFlight): it may have been sent (say SES
    // took it and only the `Sent` record failed), so it is never sent again. It stays InFlight,
    // and the firing after its lease lapses records it OutcomeUnknown.
    const until = deps.now() + backoff(head.attempts + 1);
    const again = await deps.schedules.retry(scheduleId, claimId, until, deps.now(), false).catch(() => false);
    if (again) await deps.timer.arm(scheduleId, until, head.attempts + 1);
    else await deps.timer.arm(scheduleId, deadline + LEASE_GRACE_MS + EARLY_MS, head.attempts + 1).catch(() => undefined);
    throw error;
  }
}

async function sendClaimed(head: ScheduleHead, message: ValidMessage, claimId: string, deadline: number, deps: FireDependencies): Promise<Fired> {
  const { scheduleId } = head;
  const checked = await authorise(head, message, deps.send, deps.now());
  if ('keyGone' in checked) {
    const now = deps.now();
    if (await deps.schedules.finish(scheduleId, claimId, { state: 'Cancelled' }, now)) await tell(head, 'Cancelled', deps);
    deps.logger.info('scheduled message cancelled: its key was revoked or rotated away', { scheduleId, organizationId: head.organizationId });
    return { kind: 'done', state: 'Cancelled' };
  }
  let result: MessageResult;
  let retryAt: number | undefined;
  if ('refused' in checked) result = failed(message.index, checked.refused);
  else {
    // Sent as the schedule's: its delivery and engagement webhooks name the ScheduleId.
    const sending = await deliver([{ ...message, scheduleId }], checked.organization, { deadline, beforeSend: () => deps.schedules.inFlight(scheduleId, claimId, deps.now()), test: head.test === true }, deps.send);
    result = sending.results.get(message.index) ?? failed(message.index, 'SendFailed');
    // Refused for the daily quota: nothing can change before it resets at 00:00 UTC.
    retryAt = sending.quota?.refused.has(message.index) ? sending.quota.resetAt : sending.retryAt;
  }
  recordResults(deps.send.metrics, [result]);
  const now = deps.now();
  // What the suppression list left out is kept with the outcome, and told with it.
  const { Suppressed: suppressed } = result;
  const told = { ...head, suppressed };

  if (result.Status === 'Sent') {
    await deps.schedules.finish(scheduleId, claimId, { state: 'Sent', messageId: result.MessageId, suppressed }, now);
    deps.logger.info('scheduled message sent', { scheduleId, organizationId: head.organizationId, messageId: result.MessageId, lateMs: now - head.sendAt });
    return { kind: 'done', state: 'Sent' };
  }
  if (result.Status === 'Expired') {
    if (await deps.schedules.finish(scheduleId, claimId, { state: 'Expired', suppressed }, now)) await tell(told, 'Expired', deps);
    return { kind: 'done', state: 'Expired' };
  }
  const code = result.Status === 'Failed' ? result.Error.Code : 'SendFailed';
  if (WAIT_CODES.has(code) && now < head.sendAt + MAX_WAIT_MS) {
    const attempt = head.attempts + 1;
    const until = Math.max(retryAt ?? 0, now + backoff(attempt));
    if (await deps.schedules.retry(scheduleId, claimId, until, now)) await deps.timer.arm(scheduleId, until, attempt);
    deps.logger.info('scheduled message waits', { scheduleId, organizationId: head.organizationId, code, until: new Date(until).toISOString() });
    return { kind: 'waiting', until };
  }
  const error = errorOf(code);
  if (await deps.schedules.finish(scheduleId, claimId, { state: 'Failed', error, suppressed }, now)) await tell(told, 'Failed', deps, error);
  deps.logger.info('scheduled message not sent', { scheduleId, organizationId: head.organizationId, code });
  return { kind: 'done', state: 'Failed' };
}

/**
 * The key that made the schedule (CONTRACT section 13 item 5), still current and not expired, then
 * the send endpoint's membership and sender rules (the key's senders too), against the records as
 * they are now.
 */
async function authorise(head: ScheduleHead, message: ValidMessage, deps: SendDependencies, now: number): Promise<{ organization: OrganizationAccess } | { refused: FailureCode } | { keyGone: true }> {
  let policy: KeyPolicy = {};
  if (head.keyHash !== undefined) {
    const { key } = await deps.access.lookup(head.keyHash, undefined);
    // Revoked, rotated away, or expired by now (docs/keys.md): the schedule died with its key. So
    // it did if its key may no longer send (a rotate refuses to keep schedules on such a key).
    if (key?.userId !== head.userId || isExpired(key.policy, now) || !allowsScope(key.policy, 'send')) return { keyGone: true };
    policy = key.policy;
  }
  try {
    const organization = await authoriseOrganization({ userId: head.userId }, head.organizationId, deps.access);
    authoriseSenders([message], organization, policy);
    authoriseSending(organization);
    return { organization };
  } catch (error) {
    if (error instanceof OrganizationPausedProblem) return { refused: 'OrganizationPaused' };
    if (error instanceof OrganizationForbiddenProblem) return { refused: 'OrganizationForbidden' };
    if (error instanceof SenderForbiddenProblem) return { refused: 'SenderForbidden' };
    throw error;
  }
}

async function wait(head: ScheduleHead, until: number, attempt: number, deps: FireDependencies): Promise<Fired> {
  await deps.timer.arm(head.scheduleId, until, attempt);
  return { kind: 'waiting', until };
}

async function tell(head: ScheduleHead, status: 'Expired' | 'Failed' | 'Cancelled', deps: FireDependencies, error?: ScheduleError): Promise<void> {
  await deps.notices?.notify(headEvent(head, status, deps.now(), error));
}

/** Exponential, from 1 s to 5 minutes, with full jitter so a crowd of waiting schedules spreads out. */
function backoff(attempt: number): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, attempt - 1));
  return ceiling / 2 + Math.random() * (ceiling / 2);
}
