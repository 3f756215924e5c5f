/**
 * The events function: SES events, from the configuration set's EventBridge destination through
 * an SQS queue, each recorded by `recordEvent`. A record that fails (storage, queue) comes back
 * through SQS's partial batch failures; after the queue's last attempt it waits in the
 * dead-letter queue, whose alarm says so. Lambda runs it through `index.ts`; the local stack runs
 * this same chain from its mailbox simulator.
 */
import { sqsBatchHandler } from '../shared/queue/sqs-batch';
import type { Tracing } from '../shared/runtime/observability';
import type { EventsDependencies } from './record-event';
import { recordEvent } from './record-event';

export function createEventsHandler(deps: EventsDependencies, tracing?: Tracing) {
  return sqsBatchHandler(
    deps,
    tracing,
    async (record) => {
      await recordEvent(record.body, deps);
      return true;
    },
    (record, error) => deps.logger.error('could not record a delivery event; SQS will deliver it again', { sqsMessageId: record.messageId, error: error as Error }),
  );
}
