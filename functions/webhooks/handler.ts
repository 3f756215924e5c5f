/**
 * The webhook delivery function: each SQS record is one delivery attempt (`deliverWebhook`). A
 * failed attempt hides its message for the next backoff delay and reports it failed, so SQS
 * hands it back then; past the last attempt, SQS moves it to the dead-letter queue. Lambda runs
 * it through `index.ts`; the local stack runs this same chain from its in-process queue.
 */
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { sqsBatchHandler } from '../shared/queue/sqs-batch';
import type { Tracing } from '../shared/runtime/observability';
import type { WebhookJob } from '../shared/webhooks/payload';
import type { RetryScheduler } from '../shared/webhooks/queue';
import type { DeliveryDependencies } from './deliver';
import { deliverWebhook } from './deliver';

export interface WebhookHandlerDependencies extends DeliveryDependencies {
  readonly retries: RetryScheduler;
  readonly metrics: Metrics;
}

function parseJob(body: string): WebhookJob | undefined {
  try {
    const job = JSON.parse(body) as Partial<WebhookJob>;
    return typeof job.organizationId === 'string' && typeof job.webhookId === 'string' && typeof job.payload === 'string' ? (job as WebhookJob) : undefined;
  } catch {
    return undefined;
  }
}

export function createWebhookHandler(deps: WebhookHandlerDependencies, tracing?: Tracing) {
  return sqsBatchHandler(
    deps,
    tracing,
    async (record) => {
      const job = parseJob(record.body);
      if (!job) {
        deps.logger.warn('dropped a webhook queue message that is not a delivery job', { sqsMessageId: record.messageId });
        return true;
      }
      const attempt = Math.max(1, Number(record.attributes?.ApproximateReceiveCount) || 1);
      const outcome = await deliverWebhook(job, attempt, deps);
      deps.metrics.addMetric(outcome.kind === 'delivered' ? 'WebhooksDelivered' : outcome.kind === 'dropped' ? 'WebhooksDropped' : 'WebhookAttemptsFailed', MetricUnit.Count, 1);
      if (outcome.kind !== 'retry') return true;
      if (outcome.afterSeconds !== undefined) await deps.retries.retryLater(record.receiptHandle, outcome.afterSeconds);
      return false;
    },
    (record, error) => deps.logger.error('webhook delivery attempt failed unexpectedly; SQS will hand it back', { sqsMessageId: record.messageId, error: error as Error }),
  );
}
