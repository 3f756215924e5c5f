/**
 * Pausing an Organization (CONTRACT section 11 items 3 and 4), the same way whoever decides it:
 * the events function when its rates cross a threshold, the send function when Amazon SES refuses
 * a send because it paused the Organization's tenant.
 *
 * The pause is written first, conditionally, and only the caller whose write made it tells the
 * world (the `OrganizationsPaused` metric the stack's alarm watches, a warning in the log, the
 * `organization.paused` webhook): a repeat of the decision changes nothing. A crash between the
 * write and the webhook loses the webhook, not the pause. The send function's webhook queue (SQS
 * in AWS) is loaded with its first use, so a cold start still reads none of it.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Pause } from '../domain/reputation';
import type { ReputationCounter } from '../store/dynamodb-reputation-store';
import { pausedWebhookJob } from '../webhooks/payload';
import type { WebhookOutbox } from '../webhooks/queue';
import type { WebhookConfigs } from '../webhooks/webhook-store';

/** The metric the stack's alarm fires on. */
export const PAUSED_METRIC = 'OrganizationsPaused';

export interface PauseDependencies {
  readonly pauses: Pick<ReputationCounter, 'pause'>;
  /** Absent: no `organization.paused` webhook from this caller. */
  readonly notify?: { readonly webhooks: WebhookConfigs; readonly outbox: WebhookOutbox } | undefined;
  readonly logger: Logger;
  readonly metrics: Metrics;
}

/** True when this call paused it (false: it was paused already, or does not exist). */
export async function pauseOrganization(organizationId: string, pause: Pause, deps: PauseDependencies): Promise<boolean> {
  if (!(await deps.pauses.pause(organizationId, pause))) return false;
  deps.metrics.addMetric(PAUSED_METRIC, MetricUnit.Count, 1);
  deps.logger.warn('Organization paused', { organizationId, pausedAt: pause.at, reason: pause.reason });
  const { notify } = deps;
  if (notify && (await notify.webhooks.get(organizationId))) await notify.outbox.enqueue(pausedWebhookJob(organizationId, pause));
  return true;
}
