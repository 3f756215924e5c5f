/**
 * The scheduling parts every function that touches schedules builds the same way (the send,
 * scheduled-send, cancel and settings functions): the schedule store, the timer (EventBridge Scheduler and
 * the schedule queue in AWS, the local stack's own locally), and the webhook notices. Apart from
 * the send function's composition root so the cancel function's bundle carries no mailer.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { ClientOptions } from '../runtime/clients';
import type { Config } from '../runtime/config';
import type { WebhookJob } from '../webhooks/payload';
import type { EventSink } from '../mail/test-mailer';
import type { WebhookOutbox } from '../webhooks/queue';
import { DynamoDbWebhookStore } from '../webhooks/webhook-store';
import type { ScheduleNotices } from './notices';
import { WebhookScheduleNotices } from './notices';
import type { ScheduleStore } from './schedule-store';
import { DynamoDbScheduleStore } from './schedule-store';
import type { ScheduleTimer } from './timer';

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
  /** Where test mode's simulated events go: the local stack's events queue. */
  readonly testEvents?: EventSink;
}

/** A timer for a setup that has none (the test harness): scheduling answers `ScheduleUnavailable`. */
const NO_TIMER: ScheduleTimer = {
  arm: () => Promise.reject(new Error('no scheduler is configured (SCHEDULE_GROUP_NAME …) and none was given')),
  disarm: () => Promise.resolve(),
};

/** What the scheduling parts read: the table, and the timer's and the webhook queue's settings. */
export type SchedulingConfig = Pick<Config, 'tableName' | 'region' | 'webhookQueueUrl' | 'scheduler'>;

export function createSchedulingDependencies(config: SchedulingConfig, dynamoDb: DynamoDBDocumentClient, logger: Logger, clients: ClientOptions = {}, local: LocalParts = {}): SchedulingDependencies {
  // The SQS and Scheduler clients are loaded with the first schedule or webhook notice, not at
  // start-up: most sends make neither, and every instance would pay for them in its cold start.
  const sqs = once(async () => (await import('../runtime/queue-clients')).createSqsClient(config, clients));
  const webhookQueueUrl = config.webhookQueueUrl;
  const outbox = local.outbox ?? (webhookQueueUrl ? lazyOutbox(sqs, webhookQueueUrl) : undefined);
  const scheduler = config.scheduler;
  const timer =
    local.timer ??
    (scheduler
      ? lazyTimer(async () => {
          const [{ createSchedulerClient }, { AwsScheduleTimer }] = await Promise.all([import('../runtime/queue-clients'), import('./timer')]);
          return new AwsScheduleTimer(createSchedulerClient(config, clients), await sqs(), scheduler);
        })
      : NO_TIMER);
  return {
    schedules: new DynamoDbScheduleStore(dynamoDb, config.tableName),
    timer,
    notices: outbox && new WebhookScheduleNotices(new DynamoDbWebhookStore(dynamoDb, config.tableName), outbox, logger),
  };
}

/** `make` once, when first asked; a failure is not kept, so the next call tries again. */
function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => (made ??= make().catch((error: unknown) => {
    made = undefined;
    throw error;
  }));
}

function lazyTimer(make: () => Promise<ScheduleTimer>): ScheduleTimer {
  const timer = once(make);
  return {
    arm: async (scheduleId, at, attempt) => (await timer()).arm(scheduleId, at, attempt),
    disarm: async (scheduleId) => (await timer()).disarm(scheduleId),
  };
}

function lazyOutbox(sqs: () => Promise<SQSClient>, queueUrl: string): WebhookOutbox {
  const queue = once(async () => new (await import('../webhooks/queue')).SqsWebhookQueue(await sqs(), queueUrl));
  return { enqueue: async (job: WebhookJob) => (await queue()).enqueue(job) };
}
