/**
 * One send request, start to finish: who is calling, is the body valid, may they send in that
 * Organization from those addresses, then send and decide the status. Plain function; the
 * middy chain in `handler.ts` is its HTTP face.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { DEFAULT_SCHEDULED } from '../shared/domain/org-limits';
import type { Config } from '../shared/runtime/config';
import type { Mailer } from '../shared/mail/ports';
import type { AccessStore, DailyUsage, IdempotencyStore, OrganizationAccess, StoredResponse, SuppressionList } from '../shared/store/ports';
import { HttpProblem } from '../shared/http/problems';
import { once } from '../shared/runtime/deferred';
import { withStorageFaults } from '../shared/store/storage-errors';
import type { Caller } from './authorisation';
import { authoriseOrganization, authoriseSenders, authoriseSending } from './authorisation';
import type { IdempotentSession } from './idempotency';
import { readIdempotencyKey } from './idempotency-key';
import { recordResults, timedMailer } from './metrics';
import { decideOutcome } from './outcome';
import type { Pacer } from './pacing';
import type { DailyQuota } from './quota';
import { rateLimitHeaders, readDailyQuota, settleDailyQuota, takeDailyQuota } from './quota';
import { isScheduled } from './send-at';
import type { SchedulingDependencies } from '../shared/schedules/dependencies';
import type { MessageResult, SendOptions } from './sending';
import { sendMessages } from './sending';
import { applySuppressions } from './suppression';
import { renderTemplates } from './templated';
import { resolveMessageTracking } from './tracking';
import type { TemplateReader } from '../shared/templates/template-store';
import type { ValidMessage } from '../shared/mail/valid-message';
import { loadMessageContentFor } from './content-fields';
import { validateSendRequest } from './validation';

// What a request with an `Idempotency-Key`, or with a message whose `SendAt` is ahead, goes
// through: loaded with the first such request, not at every cold start (docs/performance.md).
const idempotencySteps = once(() => import('./idempotency'));
const schedulingSteps = once(() => import('./scheduling'));

export interface SendDependencies {
  readonly config: Config;
  readonly access: AccessStore;
  readonly idempotency: IdempotencyStore;
  readonly mailer: Mailer;
  /** The Organizations' suppression lists; read only for an Organization that has one. */
  readonly suppressions: SuppressionList;
  /** Spends the account's send rate (one per instance, it keeps the rate it read). */
  readonly pacer: Pacer;
  /** The Organizations' use of their daily quotas; touched only for an Organization that has one. */
  readonly dailyUsage: DailyUsage;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly now: () => number;
  /** Where messages with a `SendAt` still ahead wait for their time (CONTRACT section 13). */
  readonly scheduling: SchedulingDependencies;
  /** Stored templates (CONTRACT section 14), read only for a message that names one. */
  readonly templates: TemplateReader;
  /** Test mode's mailer (docs/keys.md): no SES client behind it, only simulated events. */
  readonly testMailer: Mailer;
}

export interface SendInput {
  /** Who is calling: resolved from the API key before the body was parsed. */
  readonly caller: Caller;
  readonly idempotencyKey: string | undefined;
  readonly body: unknown;
  readonly requestId: string;
  /** Epoch milliseconds by which sending must be over. */
  readonly deadline: number;
  /** Epoch milliseconds by which this invocation will have ended, one way or another. */
  readonly lockUntil: number;
}

function responseHeaders(requestId: string, extra: Readonly<Record<string, string>>): Record<string, string> {
  return { ...extra, 'Content-Type': 'application/json', 'Cache-Control': 'no-store', 'X-Request-Id': requestId };
}

export async function handleSendRequest(input: SendInput, deps: SendDependencies): Promise<APIGatewayProxyStructuredResultV2> {
  const { caller } = input;
  // What the request's log line should say is appended to the logger as it is learnt; the chain
  // clears it after every invocation.
  deps.logger.appendKeys({ userId: caller.userId });
  const idempotencyKey = readIdempotencyKey(input.idempotencyKey);
  // What a request with a key goes through, loaded before any check can refuse it or anything is sent.
  const idempotency = idempotencyKey === undefined ? undefined : { key: idempotencyKey, steps: await idempotencySteps() };
  await loadMessageContentFor(input.body);
  const request = validateSendRequest(input.body, { ...deps.config, now: deps.now() });
  const organization = await authoriseOrganization(caller, request.organizationId, deps.access);
  deps.logger.appendKeys({ organizationId: request.organizationId, messages: request.messages.length });
  let messages: readonly ValidMessage[];
  try {
    authoriseSending(organization);
    authoriseSenders(request.messages, organization, caller.policy);
    // Rendered once the caller is known to belong: a template's existence is the Organization's business.
    // The idempotency fingerprint stays the client's own request (below), not what it rendered to.
    // Tracking is resolved here, at acceptance: a scheduled message is stored with what it was accepted with.
    messages = resolveMessageTracking(await renderTemplates(request.messages, request.organizationId, deps.templates), organization);
  } catch (error) {
    // A retry of a request that completed gets its first response, whatever changed since: the
    // Organization paused, a sender removed, a template deleted or saved anew. Only membership,
    // checked above, still decides. Looked up only when such a check refuses: an accepted request
    // meets its record when it claims the key below.
    if (idempotency === undefined || !(error instanceof HttpProblem) || error.status >= 500) throw error;
    const first = await withStorageFaults(() => idempotency.steps.completedResponse({ store: deps.idempotency, userId: caller.userId, key: idempotency.key, test: caller.test, request, now: deps.now() }));
    if (first) return replayed(first, input.requestId, deps.logger);
    throw error;
  }

  let session: IdempotentSession | undefined;
  let known: ReadonlyMap<number, MessageResult> = new Map();
  if (idempotency !== undefined) {
    const began = await idempotency.steps.beginIdempotent({
      store: deps.idempotency,
      userId: caller.userId,
      key: idempotency.key,
      test: caller.test,
      request,
      now: deps.now(),
      lockUntil: input.lockUntil,
    });
    if (began.kind === 'replay') return replayed(began.response, input.requestId, deps.logger);
    ({ session, known } = began);
  }

  // Which messages wait for their SendAt is decided by the first attempt's clock: a retry that
  // resumes it after a SendAt passed must not send now what the first attempt scheduled.
  const now = session ? Math.min(deps.now(), session.startedAt) : deps.now();
  const unsent = messages.filter((message) => !known.has(message.index));
  // A test send takes nothing from the daily quota, and its answer still says where it stands
  // (CONTRACT 11.2): read before anything is sent, so a failed read sends nothing.
  const testQuota = caller.test ? await withStorageFaults(() => readDailyQuota(organization, deps.dailyUsage, deps.now())) : undefined;
  const hooks = session && checkpointHooks(session, deps.logger, input.requestId);
  // Sent first, scheduled after: a fault that fails the request (503: storage) then comes before
  // anything was scheduled, so nothing is scheduled twice by a client's retry.
  const toSchedule = unsent.filter((message) => isScheduled(message.sendAt, now));
  // Loaded before anything is sent, so a failed load sends nothing.
  const scheduling = toSchedule.length === 0 ? undefined : await schedulingSteps();
  const sending = await deliver(
    unsent.filter((message) => !isScheduled(message.sendAt, now)),
    organization,
    { deadline: input.deadline, ...hooks, test: caller.test },
    { ...deps, requestId: input.requestId },
  );
  const scheduled = scheduling === undefined ? new Map<number, MessageResult>() : await scheduling.scheduleMessages(
    toSchedule,
    {
      organizationId: request.organizationId,
      userId: caller.userId,
      keyHash: caller.keyHash,
      pendingLimit: organization.limits?.scheduled ?? DEFAULT_SCHEDULED,
      test: caller.test,
      seed: session?.claimId,
      now: deps.now(),
      concurrency: deps.config.sendConcurrency,
      retentionDays: deps.config.statusRetentionDays,
      logger: deps.logger,
      onResult: hooks?.onResult,
    },
    deps.scheduling,
  );
  const byIndex = new Map([...known, ...scheduled, ...sending.results]);
  const results = request.messages.map((message) => byIndex.get(message.index) as MessageResult);
  const after = deps.now();
  const roomIn = sending.retryAt === undefined ? undefined : (sending.retryAt - after) / 1_000;
  const quota = sending.quota ?? testQuota;
  const refusal = quota && quota.refused.size > 0 ? { resetInSeconds: (quota.resetAt - after) / 1_000, refused: quota.refused.size } : undefined;
  const outcome = decideOutcome(results, roomIn, refusal);
  const response: StoredResponse = {
    statusCode: outcome.statusCode,
    headers: responseHeaders(input.requestId, { ...outcome.headers, ...(quota && rateLimitHeaders(quota, after)) }),
    body: JSON.stringify({ OrganizationId: request.organizationIdAsSent, Messages: results }),
  };
  if (session) {
    // Failing to store the response costs nothing sent twice: a retry then resumes from checkpoints.
    await session.complete(response).catch((error: unknown) => {
      deps.logger.warn('could not store the idempotent response', { requestId: input.requestId, error: error as Error });
    });
  }

  deps.logger.appendKeys({ ...recordResults(deps.metrics, results) });
  // Visible at DEBUG, or for the share of invocations POWERTOOLS_LOGGER_SAMPLE_RATE picks.
  deps.logger.debug('message results', {
    requestId: input.requestId,
    resumed: known.size,
    results: results.map((r) => ({ index: r.Index, status: r.Status, ...(r.Status === 'Failed' && { code: r.Error.Code }) })),
  });
  return response;
}

/**
 * What an authorised batch goes through to be sent: the Organization's suppression list, its
 * daily quota, then sending at its fair share of the account's pace (CONTRACT sections 10, 11).
 * A send request takes this path for its messages to go now, and the scheduled-send function for
 * each scheduled message at its time, so both get the same rules.
 */
export async function deliver(
  messages: readonly ValidMessage[],
  organization: OrganizationAccess,
  options: Pick<SendOptions, 'deadline' | 'beforeSend' | 'onResult'> & { readonly test?: boolean },
  deps: Pick<SendDependencies, 'config' | 'suppressions' | 'mailer' | 'testMailer' | 'metrics' | 'now' | 'pacer' | 'dailyUsage' | 'logger'> & { readonly requestId?: string },
): Promise<{ readonly results: ReadonlyMap<number, MessageResult>; readonly retryAt: number | undefined; readonly quota: DailyQuota | undefined }> {
  const { test, ...sendOptions } = options;
  if (test) return deliverTest(messages, organization, sendOptions, deps);
  const { sendable, results: suppressed } = await applySuppressions(messages, organization, deps.suppressions);
  const quota = await takeDailyQuota(sendable, organization, deps.dailyUsage, deps.now());
  for (const result of quota?.refused.values() ?? []) await options.onResult?.(result);
  const limits = organization.limits;
  let sending: Awaited<ReturnType<typeof sendMessages>>;
  try {
    sending = await sendMessages(quota ? sendable.filter((message) => !quota.refused.has(message.index)) : sendable, {
      organizationId: organization.organizationId,
      sharer: { organizationId: organization.organizationId, weight: limits?.weight ?? 1, rate: limits?.rate },
      mailer: timedMailer(deps.mailer, deps.metrics, deps.now),
      concurrency: deps.config.sendConcurrency,
      now: deps.now,
      pacer: deps.pacer,
      ...sendOptions,
    });
  } catch (error) {
    // Nothing was sent (the budget could not be reached before the first message): the quota taken goes back.
    const taken = [...(quota?.taken.values() ?? [])].reduce((sum, units) => sum + units, 0);
    if (quota && taken > 0) await deps.dailyUsage.giveBack(organization.organizationId, quota.day, taken).catch(() => undefined);
    throw error;
  }
  if (quota) {
    await settleDailyQuota(quota, organization.organizationId, sending.results, deps.dailyUsage).catch((error: unknown) => {
      // Units not given back only make the quota stricter for the rest of the day; nothing is sent twice.
      deps.logger.warn('could not give back unused daily quota', { requestId: deps.requestId, error: error as Error });
    });
  }
  const results = new Map([...suppressed, ...(quota?.refused ?? []), ...sending.results.map((result) => [result.Index, result] as const)]);
  return { results, retryAt: sending.retryAt, quota };
}

/**
 * Test mode (docs/keys.md), decided here before any mailer is chosen: the test mailer, which
 * holds no SES client, and none of what live mail spends or consults: no share of the SES rate
 * (no pacer), no daily quota, no suppression list (the mailbox simulator's rules decide).
 */
async function deliverTest(
  messages: readonly ValidMessage[],
  organization: OrganizationAccess,
  options: Pick<SendOptions, 'deadline' | 'beforeSend' | 'onResult'>,
  deps: Pick<SendDependencies, 'config' | 'testMailer' | 'metrics' | 'now'>,
): Promise<{ readonly results: ReadonlyMap<number, MessageResult>; readonly retryAt: undefined; readonly quota: undefined }> {
  const sending = await sendMessages(messages, {
    organizationId: organization.organizationId,
    sharer: { organizationId: organization.organizationId, weight: 1, rate: undefined },
    mailer: timedMailer(deps.testMailer, deps.metrics, deps.now),
    concurrency: deps.config.sendConcurrency,
    now: deps.now,
    ...options,
  });
  return { results: new Map(sending.results.map((result) => [result.Index, result] as const)), retryAt: undefined, quota: undefined };
}

function replayed(response: StoredResponse, requestId: string, logger: Logger): APIGatewayProxyStructuredResultV2 {
  logger.appendKeys({ idempotentReplay: true });
  const { statusCode, headers, body } = response;
  return { statusCode, headers: { ...headers, 'X-Request-Id': requestId, 'Idempotent-Replayed': 'true' }, body };
}

function checkpointHooks(session: IdempotentSession, logger: Logger, requestId: string) {
  return {
    beforeSend: (message: ValidMessage) => session.inFlight(message.index),
    onResult: (result: MessageResult) =>
      session.done(result).catch((error: unknown) => {
        // The message is already sent or settled; a lost DONE checkpoint only makes a resumed
        // retry report it as OutcomeUnknown instead of its result.
        logger.warn('could not checkpoint a message result', { requestId, index: result.Index, error: error as Error });
      }),
  };
}
