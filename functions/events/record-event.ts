/**
 * One SES event, start to finish (CONTRACT section 10): record it against its message, put
 * permanently bounced and complaining recipients on the Organization's suppression list, and, if
 * the Organization has a webhook and the event moved any recipient on, queue the webhook. Plain
 * function; `handler.ts` runs it for each SQS record.
 *
 * Each step can be repeated safely, so a record that fails part-way is simply retried by SQS: the
 * state write is conditional, the suppression list a set, and the webhook keeps the event's id.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { parseSesEvent } from '../shared/delivery/ses-event';
import type { ActivityDependencies } from './record-activity';
import { recordActivity } from './record-activity';
import type { DeliveryStore } from '../shared/store/dynamodb-delivery-store';
import type { DynamoDbSuppressionStore } from '../shared/store/dynamodb-suppression-store';
import { webhookJob } from '../shared/webhooks/payload';
import type { WebhookOutbox } from '../shared/webhooks/queue';
import type { WebhookConfigs } from '../shared/webhooks/webhook-store';

export interface EventsDependencies extends ActivityDependencies {
  readonly deliveries: DeliveryStore;
  readonly suppressions: Pick<DynamoDbSuppressionStore, 'add'>;
  readonly webhooks: WebhookConfigs;
  readonly outbox: WebhookOutbox;
  readonly retentionDays: number;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly now: () => number;
}

export type Outcome = 'recorded' | 'unchanged' | 'ignored';

export async function recordEvent(body: string, deps: EventsDependencies): Promise<Outcome> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  const event = parseSesEvent(parsed);
  if (!event) {
    // Not an SES event of ours (no message id or no Organization tag): retrying cannot change that.
    deps.logger.warn('ignored an event that is not an SES delivery event of this service');
    deps.metrics.addMetric('DeliveryEventsIgnored', MetricUnit.Count, 1);
    return 'ignored';
  }
  const expiresAt = Math.floor(deps.now() / 1_000) + deps.retentionDays * 24 * 60 * 60;
  const moved = await deps.deliveries.record(event, expiresAt);
  // The settings page's Activity row follows the message's status (record-activity.ts).
  if (moved.length > 0) await recordActivity(parsed, event, deps, expiresAt);
  if (event.suppress) {
    const { reason, addresses } = event.suppress;
    await deps.suppressions.add(event.organizationId, addresses.map((address) => ({ address, reason, at: event.at })));
  }
  if (moved.length > 0 && (await deps.webhooks.get(event.organizationId))) await deps.outbox.enqueue(webhookJob(event, moved));

  deps.metrics.addMetric('DeliveryEvents', MetricUnit.Count, 1);
  const byType = deps.metrics.singleMetric();
  byType.addDimension('EventType', event.type);
  byType.addMetric('DeliveryEventsByType', MetricUnit.Count, 1);
  deps.logger.info('delivery event', { organizationId: event.organizationId, messageId: event.messageId, type: event.type, moved: moved.length });
  return moved.length > 0 ? 'recorded' : 'unchanged';
}
