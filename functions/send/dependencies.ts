/**
 * The one composition root of the send function: configuration in, clients and adapters out.
 * The Lambda entry (`index.ts`), the scheduled-send function, the local stack and the test
 * harness all build their dependencies here, each from a `Config` of its own, so they cannot
 * wire it differently.
 */
import { SesMailer } from '../shared/mail/ses-mailer';
import type { ClientOptions } from '../shared/runtime/clients';
import { createDynamoDbClient, createSesClient } from '../shared/runtime/clients';
import type { Config } from '../shared/runtime/config';
import { createLogger, createMetrics } from '../shared/runtime/observability';
import { createSchedulerClient, createSqsClient } from '../shared/runtime/queue-clients';
import { WebhookScheduleNotices } from '../shared/schedules/notices';
import { DynamoDbScheduleStore } from '../shared/schedules/schedule-store';
import type { ScheduleTimer } from '../shared/schedules/timer';
import { AwsScheduleTimer } from '../shared/schedules/timer';
import { createAccessStore } from '../shared/store/cached-access-store';
import { DynamoDbIdempotencyStore } from '../shared/store/dynamodb-idempotency-store';
import { DynamoDbSendBudget } from '../shared/store/dynamodb-send-budget';
import { DynamoDbSuppressionStore } from '../shared/store/dynamodb-suppression-store';
import type { WebhookOutbox } from '../shared/webhooks/queue';
import { SqsWebhookQueue } from '../shared/webhooks/queue';
import { DynamoDbWebhookStore } from '../shared/webhooks/webhook-store';
import { Pacer } from './pacing';
import type { SendDependencies } from './send-request';

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

/** Built once per function instance (or local stack), never per request. */
export function createDependencies(config: Config, clients: ClientOptions = {}, local: LocalParts = {}): SendDependencies {
  const dynamoDb = createDynamoDbClient(config, clients);
  const access = createAccessStore(dynamoDb, config);
  const mailer = new SesMailer(createSesClient(config, clients), config.sesConfigurationSet);
  const logger = createLogger();
  const sqs = config.scheduler || config.webhookQueueUrl ? createSqsClient(config, clients) : undefined;
  const outbox = local.outbox ?? (sqs && config.webhookQueueUrl ? new SqsWebhookQueue(sqs, config.webhookQueueUrl) : undefined);
  return {
    config,
    access,
    idempotency: new DynamoDbIdempotencyStore(dynamoDb, config.tableName),
    mailer,
    suppressions: new DynamoDbSuppressionStore(dynamoDb, config.tableName),
    pacer: new Pacer({ budget: new DynamoDbSendBudget(dynamoDb, config.tableName), quota: mailer, maxSendRate: config.sesMaxSendRate, now: Date.now }),
    logger,
    metrics: createMetrics(),
    now: Date.now,
    scheduling: {
      schedules: new DynamoDbScheduleStore(dynamoDb, config.tableName),
      timer: local.timer ?? awsTimer(config, clients, sqs),
      notices: outbox && new WebhookScheduleNotices(new DynamoDbWebhookStore(dynamoDb, config.tableName), outbox, logger),
    },
  };
}

function awsTimer(config: Config, clients: ClientOptions, sqs: ReturnType<typeof createSqsClient> | undefined): ScheduleTimer {
  if (!config.scheduler || !sqs) return NO_TIMER;
  return new AwsScheduleTimer(createSchedulerClient(config, clients), sqs, config.scheduler);
}
