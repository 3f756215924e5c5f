/**
 * One SES event, start to finish (CONTRACT section 10; opens and clicks go to record-engagement.ts): record it against its message, put
 * permanently bounced and complaining recipients on the Organization's suppression list, and, if
 * the Organization has a webhook and the event moved any recipient on, queue the webhook. Then
 * count it towards the Organization's reputation and pause the Organization when a rate crosses
 * its threshold (CONTRACT section 11 item 3). Plain function; `handler.ts` runs it for each SQS
 * record.
 *
 * Each step can be repeated safely, so a record that fails part-way is simply retried by SQS: the
 * state write is conditional, the suppression list a set, the webhook keeps the event's id, the
 * count is claimed once per event and the pause is written only where there is none.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { parseEngagementEvent, parseSesEvent } from '../shared/delivery/ses-event';
import type { ReputationThresholds } from '../shared/domain/reputation';
import { judge } from '../shared/domain/reputation';
import { pauseOrganization } from '../shared/reputation/pause-organization';
import type { ReputationCounter } from '../shared/store/dynamodb-reputation-store';
import type { DynamoDbEngagementStore } from '../shared/store/dynamodb-engagement-store';
import type { ActivityDependencies } from './record-activity';
import { recordActivity } from './record-activity';
import { recordEngagement } from './record-engagement';
import type { DynamoDbActivityStore } from '../shared/store/dynamodb-activity-store';
import type { DeliveryStore } from '../shared/store/dynamodb-delivery-store';
import type { DynamoDbSuppressionStore } from '../shared/store/dynamodb-suppression-store';
import { webhookJob } from '../shared/webhooks/payload';
import type { WebhookOutbox } from '../shared/webhooks/queue';
import type { WebhookConfigs } from '../shared/webhooks/webhook-store';

export interface EventsDependencies extends ActivityDependencies {
  readonly activity: ActivityDependencies['activity'] & Pick<DynamoDbActivityStore, 'count'>;
  readonly deliveries: DeliveryStore;
  readonly engagement: Pick<DynamoDbEngagementStore, 'claim' | 'record'>;
  readonly suppressions: Pick<DynamoDbSuppressionStore, 'add'>;
  readonly webhooks: WebhookConfigs;
  readonly outbox: WebhookOutbox;
  readonly retentionDays: number;
  readonly reputation: ReputationCounter;
  readonly thresholds: ReputationThresholds;
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
  const engagement = event ? undefined : parseEngagementEvent(parsed);
  // An open or a click says nothing about delivery: no state moves, nothing is suppressed or counted in reputation.
  if (engagement) return recordEngagement(engagement, deps);
  if (!event) {
    // Not an SES event of ours (no message id or no Organization tag): retrying cannot change that.
    deps.logger.warn('ignored an event that is not an SES delivery event of this service');
    deps.metrics.addMetric('DeliveryEventsIgnored', MetricUnit.Count, 1);
    return 'ignored';
  }
  const expiresAt = Math.floor(deps.now() / 1_000) + deps.retentionDays * 24 * 60 * 60;
  // Suppressed before the state is recorded: once the status answer says Bounced or Complained,
  // the address is on the list (adding it again on a retried event changes nothing).
  if (event.suppress) {
    const { reason, addresses } = event.suppress;
    await deps.suppressions.add(event.organizationId, addresses.map((address) => ({ address, reason, at: event.at })));
  }
  const moved = await deps.deliveries.record(event, expiresAt);
  // The settings page's Activity row follows the message's status (record-activity.ts).
  if (moved.length > 0) await recordActivity(parsed, event, deps, expiresAt);
  if (moved.length > 0 && (await deps.webhooks.get(event.organizationId))) await deps.outbox.enqueue(webhookJob(event, moved));
  // A test message's bounces and complaints are the simulator's, not the Organization's.
  const reputation = event.test ? undefined : await deps.reputation.count(event, deps.now());
  const reason = reputation && judge(reputation, deps.thresholds);
  if (reason) {
    await pauseOrganization(event.organizationId, { at: new Date(deps.now()).toISOString(), reason }, { ...deps, pauses: deps.reputation, notify: deps });
  }

  deps.metrics.addMetric('DeliveryEvents', MetricUnit.Count, 1);
  const byType = deps.metrics.singleMetric();
  byType.addDimension('EventType', event.type);
  byType.addMetric('DeliveryEventsByType', MetricUnit.Count, 1);
  deps.logger.info('delivery event', { organizationId: event.organizationId, messageId: event.messageId, type: event.type, moved: moved.length });
  return moved.length > 0 ? 'recorded' : 'unchanged';
}
