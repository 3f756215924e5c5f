/**
 * Scheduling the messages of a send request whose `SendAt` is still ahead (CONTRACT section 13):
 * each is stored whole (schedule-store.ts) and its timer armed (timer.ts), and its result is
 * `Scheduled` with the `ScheduleId`. The request has been validated and authorised already, so a
 * scheduled message passed the same checks as one sent now; at its time it is checked again and
 * sent by the scheduled-send function (functions/scheduled/fire.ts) through the same pipeline.
 *
 * Under an `Idempotency-Key` the id is derived from the claim and the message's index, so a
 * retry after a crash finds the schedule its first try made instead of making a second one.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Logger } from '@aws-lambda-powertools/logger';
import { mapWithConcurrency } from '../shared/runtime/pool';
import type { SchedulingDependencies } from '../shared/schedules/dependencies';
import type { MessageResult } from './sending';
import { failed } from './sending';
import type { ValidMessage } from '../shared/mail/valid-message';

export interface ScheduleContext {
  readonly organizationId: string;
  readonly userId: string;
  /** The key the request came with: its schedules die with it (CONTRACT section 13 item 5). */
  readonly keyHash: string | undefined;
  /** How many pending schedules the Organization may hold (CONTRACT section 11 item 7). */
  readonly pendingLimit: number;
  /** Made with a test-mode key: the message goes through test mode at its time too. */
  readonly test?: boolean;
  /** Set under an Idempotency-Key: the claim's id, from which each message's ScheduleId is derived. */
  readonly seed: string | undefined;
  readonly now: number;
  readonly concurrency: number;
  /** How long a schedule's record outlives its time (the status endpoint answers for it meanwhile). */
  readonly retentionDays: number;
  readonly logger: Logger;
  readonly onResult?: ((result: MessageResult) => void | Promise<void>) | undefined;
}

/** How long after its `SendAt` a scheduled message may still be waiting for the budget (fire.ts). */
export const MAX_WAIT_MS = 48 * 60 * 60 * 1_000;
const DAY_SECONDS = 24 * 60 * 60;

/** A UUID (version 4 layout) from a hash, so the same seed and index always give the same id. */
export function derivedScheduleId(seed: string, index: number): string {
  const hex = createHash('sha256').update(`${seed}#${index}`).digest('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export async function scheduleMessages(messages: readonly ValidMessage[], context: ScheduleContext, deps: SchedulingDependencies): Promise<Map<number, MessageResult>> {
  const results = await mapWithConcurrency(messages, context.concurrency, async (message) => {
    const result = await scheduleOne(message, context, deps);
    await context.onResult?.(result);
    return result;
  });
  return new Map(results.map((result) => [result.Index, result]));
}

async function scheduleOne(message: ValidMessage, context: ScheduleContext, deps: SchedulingDependencies): Promise<MessageResult> {
  const sendAt = message.sendAt as number;
  const scheduleId = context.seed === undefined ? randomUUID() : derivedScheduleId(context.seed, message.index);
  const expiresAt = Math.ceil((sendAt + MAX_WAIT_MS) / 1_000) + context.retentionDays * DAY_SECONDS;
  let created: 'created' | 'exists' | 'full';
  try {
    const { organizationId, userId, keyHash, pendingLimit } = context;
    created = await deps.schedules.create({ scheduleId, organizationId, userId, ...(keyHash && { keyHash }), sendAt, message, expiresAt, pendingLimit, now: context.now, ...(context.test && { test: true as const }) });
  } catch (error) {
    context.logger.warn('could not store a scheduled message', { index: message.index, error: error as Error });
    return failed(message.index, 'ScheduleUnavailable');
  }
  // The Organization holds as many pending schedules as it may: one must be sent or cancelled first.
  if (created === 'full') {
    return failed(message.index, 'QuotaExceeded', `The Organization already has its limit of ${context.pendingLimit} scheduled messages not yet sent; one must be sent or cancelled before another is scheduled.`);
  }
  try {
    await deps.timer.arm(scheduleId, sendAt);
  } catch (error) {
    context.logger.warn('could not arm a scheduled message\'s timer', { index: message.index, scheduleId, error: error as Error });
    // Not armed, so not scheduled: take the record back rather than leave a schedule nobody fires.
    if (created === 'created') await deps.schedules.remove(scheduleId).catch(() => undefined);
    return failed(message.index, 'ScheduleUnavailable');
  }
  if (created === 'created') {
    await deps.notices?.notify({ status: 'Scheduled', organizationId: context.organizationId, scheduleId, sendAt, at: context.now, tags: message.tags, template: message.template, ...(context.test && { test: true as const }) });
  }
  return { Index: message.index, Status: 'Scheduled', ScheduleId: scheduleId };
}
