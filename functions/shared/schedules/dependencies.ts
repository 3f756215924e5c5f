/**
 * The scheduling parts every function that touches schedules builds the same way (the send,
 * scheduled-send and cancel functions): the schedule store, the timer (EventBridge Scheduler and
 * the schedule queue in AWS, the local stack's own locally), and the webhook notices. Apart from
 * the send function's composition root so the cancel function's bundle carries no mailer.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ClientOptions } from '../runtime/clients';
import type { Config } from '../runtime/config';
import { createSchedulerClient, createSqsClient } from '../runtime/queue-clients';
import type { WebhookOutbox } from '../webhooks/queue';
import { SqsWebhookQueue } from '../webhooks/queue';
import { DynamoDbWebhookStore } from '../webhooks/webhook-store';
import type { ScheduleNotices } from './notices';
import { WebhookScheduleNotices } from './notices';
import type { ScheduleStore } from './schedule-store';
import { DynamoDbScheduleStore } from './schedule-store';
import type { ScheduleTimer } from './timer';
import { AwsScheduleTimer } from './timer';

/** What scheduling a message needs: where it is kept, what fires it, who hears of it. */
export interface SchedulingDependencies {
  readonly schedules: ScheduleStore;
  readonly timer: ScheduleTimer;
  /** Webhooks (`email.scheduled`); absent where no webhook queue is configured. */
  readonly notices: ScheduleNotices | undefined;
}

/** What the local stack puts where AWS has EventBridge Scheduler and SQS. */
export interface LocalParts {
  readonly timer?: ScheduleTimer;
  readonly outbox?: WebhookOutbox;
}

/** A timer for a setup that has none (the test harness): scheduling answers `ScheduleUnavailable`. */
const NO_TIMER: ScheduleTimer = {
  arm: () => Promise.reject(new Error('no scheduler is configured (SCHEDULE_GROUP_NAME …) and none was given')),
  disarm: () => Promise.resolve(),
};

export function createSchedulingDependencies(config: Config, dynamoDb: DynamoDBDocumentClient, logger: Logger, clients: ClientOptions = {}, local: LocalParts = {}): SchedulingDependencies {
  const sqs = config.scheduler || config.webhookQueueUrl ? createSqsClient(config, clients) : undefined;
  const outbox = local.outbox ?? (sqs && config.webhookQueueUrl ? new SqsWebhookQueue(sqs, config.webhookQueueUrl) : undefined);
  const timer = local.timer ?? (config.scheduler && sqs ? new AwsScheduleTimer(createSchedulerClient(config, clients), sqs, config.scheduler) : NO_TIMER);
  return {
    schedules: new DynamoDbScheduleStore(dynamoDb, config.tableName),
    timer,
    notices: outbox && new WebhookScheduleNotices(new DynamoDbWebhookStore(dynamoDb, config.tableName), outbox, logger),
  };
}
