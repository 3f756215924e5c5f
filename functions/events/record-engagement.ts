/**
 * One SES `Open` or `Click` (CONTRACT section 17 item 4): decide whether a machine made it
 * (delivery/machine-opens.ts), count it once against the message (and its recipient, when it had
 * only one), add it to the settings page's Activity row, and queue `email.opened` /
 * `email.clicked` if the Organization has a webhook. No recipient's delivery state moves, nothing
 * is suppressed, and reputation does not count it.
 *
 * Repeats are safe: the count and the Activity row follow the event's claim (store/
 * dynamodb-engagement-store.ts), and the webhook keeps the event's id, so a receiver drops a
 * second copy as it does for every event.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { isMachineOpen } from '../shared/delivery/machine-opens';
import type { EngagementEvent } from '../shared/delivery/ses-event';
import type { DynamoDbActivityStore } from '../shared/store/dynamodb-activity-store';
import type { DeliveryStore } from '../shared/store/dynamodb-delivery-store';
import type { DynamoDbEngagementStore } from '../shared/store/dynamodb-engagement-store';
import { engagementWebhookJob } from '../shared/webhooks/payload';
import type { WebhookOutbox } from '../shared/webhooks/queue';
import type { WebhookConfigs } from '../shared/webhooks/webhook-store';

export interface EngagementDependencies {
  readonly webhooks: WebhookConfigs;
  readonly outbox: WebhookOutbox;
  readonly retentionDays: number;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly now: () => number;
  readonly engagement: Pick<DynamoDbEngagementStore, 'claim' | 'record'>;
  readonly deliveries: Pick<DeliveryStore, 'read'>;
  readonly activity: Pick<DynamoDbActivityStore, 'count'>;
}

/** When the message was delivered to the recipients the event may be attributed to (all of them when SES cannot say which). */
async function deliveredAt(event: EngagementEvent, deps: EngagementDependencies): Promise<string[]> {
  const stored = (await deps.deliveries.read([event.messageId])).get(event.messageId);
  if (stored?.organizationId !== event.organizationId) return [];
  return stored.recipients.filter((r) => r.status === 'Delivered' && (event.recipient === undefined || r.address === event.recipient)).map((r) => r.at);
}

export async function recordEngagement(event: EngagementEvent, deps: EngagementDependencies): Promise<'recorded' | 'unchanged' | 'ignored'> {
  const log = { organizationId: event.organizationId, messageId: event.messageId, type: event.type };
  if (event.test) {
    // A test-mode message never reached SES and carries no tracking: an event for one is not real.
    deps.logger.warn('ignored an open or click of a test-mode message', log);
    return 'ignored';
  }
  const expiresAt = Math.floor(deps.now() / 1_000) + deps.retentionDays * 24 * 60 * 60;
  const machine = isMachineOpen(event, await deliveredAt(event, deps), event.sentAt);
  const claimed = await deps.engagement.claim(event, expiresAt);
  if (claimed) {
    await deps.engagement.record(event, machine, expiresAt);
    // Machine opens are recorded but not counted; clicks are listed whoever made them.
    const counted = event.type === 'Click' ? 'clicks' : machine ? undefined : 'opens';
    if (counted && event.sentAt) {
      await deps.activity.count({ ...event, sentAt: event.sentAt, recipients: event.destination }, counted, expiresAt);
    }
  }
  if (await deps.webhooks.get(event.organizationId)) await deps.outbox.enqueue(engagementWebhookJob(event, machine));

  const byType = deps.metrics.singleMetric();
  byType.addDimension('EventType', event.type);
  byType.addMetric(machine ? 'MachineEngagementEvents' : 'EngagementEvents', MetricUnit.Count, 1);
  deps.logger.info('engagement event', { ...log, machine, counted: claimed });
  return claimed ? 'recorded' : 'unchanged';
}
