/**
 * The scheduled-send function: wake-ups from the schedule queue (EventBridge Scheduler's one-time
 * schedules and short SQS delays both land there, `{ "scheduleId" }`), each fired by
 * `fireSchedule`. A wake-up that fails (the table, an SES fault outside the send rules) comes back
 * through SQS's partial batch failures; after the queue's last attempt it waits in the dead-letter
 * queue, whose alarm says so, and the schedule stays recorded as it was.
 */
import type { Context, SQSRecord } from 'aws-lambda';
import { sqsBatchHandler } from '../shared/queue/sqs-batch';
import type { Tracing } from '../shared/runtime/observability';
import { parseWakeUp } from '../shared/schedules/timer';
import type { FireDependencies } from './fire';
import { fireSchedule } from './fire';

/** Time kept back from the Lambda deadline to record the outcome. */
const DEADLINE_MARGIN_MS = 3_000;
/** Without a Lambda context (tests), this long. */
const DEFAULT_DEADLINE_MS = 25_000;

export function createScheduledHandler(deps: FireDependencies, tracing?: Tracing) {
  return sqsBatchHandler(
    { logger: deps.logger, metrics: deps.send.metrics },
    tracing,
    async (record: SQSRecord, context: Context) => {
      const wakeUp = parseWakeUp(record.body);
      if (!wakeUp) {
        deps.logger.warn('ignored a schedule queue message that names no schedule', { sqsMessageId: record.messageId });
        return true;
      }
      const remaining = typeof context?.getRemainingTimeInMillis === 'function' ? context.getRemainingTimeInMillis() - DEADLINE_MARGIN_MS : DEFAULT_DEADLINE_MS;
      await fireSchedule(wakeUp.scheduleId, deps.now() + remaining, deps);
      return true;
    },
    (record, error) => deps.logger.error('could not fire a scheduled message; SQS will deliver the wake-up again', { sqsMessageId: record.messageId, error: error as Error }),
  );
}
