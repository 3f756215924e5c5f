/**
 * The scheduling parts every function that touches schedules builds the same way (the send,
 * scheduled-send, cancel and settings functions): the schedule store, the timer (EventBridge Scheduler and
 * the schedule queue in AWS, the local stack's own locally), and the webhook notices. Apart from
 * the send function's composition root so the cancel function's bundle carries no mailer. Each is
 * imported with its first use (`deferred`, or `once` for the notices): most sends schedule nothing.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ClientOptions } from '../runtime/clients';
import type { Config } from '../runtime/config';
import { deferred, once } from '../runtime/deferred';
import type { EventSink } from '../mail/test-mailer';
import type { WebhookOutbox } from '../webhooks/queue';
import type { ScheduleNotices } from './notices';
import type { ScheduleStore } from './schedule-store';
import type { ScheduleTimer } from './timer';

/** Every method of the schedule store, which its deferred port forwards. */
const SCHEDULE_STORE_METHODS = {
  create: true, remove: true, load: true, heads: true, claim: true, inFlight: true, finish: true,
  retry: true, cancel: true, settleNotice: true, oweNotice: true, pending: true,
} as const;

/** What scheduling a message needs: where it is kept, what fires it, who hears of it. */
export interface SchedulingDependencies {
  readonly schedules: ScheduleStore;
  readonly timer: ScheduleTimer;
  /** Webhooks (`email.scheduled`); absent where no webhook queue is configured. */
  readonly notices: ScheduleNotices | undefined;
  /**
   * The webhook queue the notices go to (loaded with its first use), for the function's other
   * webhooks: the send function's `organization.paused`. Absent where none is configured.
   */
  readonly outbox: WebhookOutbox | undefined;
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
  const outbox = local.outbox ?? (webhookQueueUrl ? deferred<WebhookOutbox>(async () => new (await import('../webhooks/queue')).SqsWebhookQueue(await sqs(), webhookQueueUrl), { enqueue: true }) : undefined);
  const scheduler = config.scheduler;
  const timer =
    local.timer ??
    (scheduler
      ? deferred<ScheduleTimer>(async () => {
          const [{ createSchedulerClient }, { AwsScheduleTimer }] = await Promise.all([import('../runtime/queue-clients'), import('./timer')]);
          return new AwsScheduleTimer(createSchedulerClient(config, clients), await sqs(), scheduler);
        }, { arm: true, disarm: true })
      : NO_TIMER);
  // The store and the notices are loaded with the first schedule too: the send function's cold
  // start reads none of their code, and a function that always uses them loads them with its
  // first request instead, which costs it the same.
  return {
    schedules: deferred<ScheduleStore>(async () => new (await import('./schedule-store')).DynamoDbScheduleStore(dynamoDb, config.tableName), SCHEDULE_STORE_METHODS),
    timer,
    outbox,
    notices:
      outbox &&
      noticesOnFirstUse(async () => {
        const [{ WebhookScheduleNotices }, { DynamoDbWebhookStore }] = await Promise.all([import('./notices'), import('../webhooks/webhook-store')]);
        return new WebhookScheduleNotices(new DynamoDbWebhookStore(dynamoDb, config.tableName), outbox, logger);
      }, logger),
  };
}

/**
 * The schedule webhooks, loaded with the first one. Like `WebhookScheduleNotices`, `notify` never
 * throws: its callers have already sent, scheduled or finished what it reports, and a lost notice
 * must not fail that (a send request answered 500 after sending would be sent again by a retry).
 * A notice whose code cannot even be loaded is lost and said so; the next one tries the load again.
 */
export function noticesOnFirstUse(load: () => Promise<ScheduleNotices>, logger: Pick<Logger, 'warn'>): ScheduleNotices {
  const notices = once(load);
  return {
    async notify(event) {
      let loaded: ScheduleNotices;
      try {
        loaded = await notices();
      } catch (error) {
        logger.warn('could not queue a schedule webhook', { scheduleId: event.scheduleId, status: event.status, error: error as Error });
        return;
      }
      await loaded.notify(event);
    },
  };
}
