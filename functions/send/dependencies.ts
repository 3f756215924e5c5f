/**
 * The one composition root of the send function: configuration in, clients and adapters out.
 * The Lambda entry (`index.ts`), the scheduled-send function, the local stack and the test
 * harness all build their dependencies here, each from a `Config` of its own, so they cannot
 * wire it differently.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { SesMailer } from '../shared/mail/ses-mailer';
import type { Mailer } from '../shared/mail/ports';
import type { EventSink } from '../shared/mail/test-mailer';
import type { ClientOptions } from '../shared/runtime/clients';
import { createDynamoDbClient, createSesClient } from '../shared/runtime/clients';
import type { Config } from '../shared/runtime/config';
import { deferred, once } from '../shared/runtime/deferred';
import { createLogger, createMetrics } from '../shared/runtime/observability';
import type { LocalParts } from '../shared/schedules/dependencies';
import { createSchedulingDependencies } from '../shared/schedules/dependencies';
import { createAccessStore } from '../shared/store/cached-access-store';
import { DynamoDbSendBudget } from '../shared/store/dynamodb-send-budget';
import type { DailyUsage, IdempotencyStore, SuppressionList } from '../shared/store/ports';
import type { TemplateReader } from '../shared/templates/template-store';
import type { WebhookOutbox } from '../shared/webhooks/queue';
import { Pacer } from './pacing';
import { pausingOnTenantRefusal } from './tenant-pause';
import type { SendDependencies } from './send-request';

export type { LocalParts } from '../shared/schedules/dependencies';

/** Where test mode's events go when nowhere is configured: a test message then has its id and no events. */
const NO_EVENTS: EventSink = { publish: async () => undefined };

/**
 * Test mode's mailer (docs/keys.md), loaded with the first test message: live sends never pay for
 * it in a cold start. Its events go to the events queue in AWS, to the local stack's own locally.
 */
function lazyTestMailer(config: Config, clients: ClientOptions, localEvents: EventSink | undefined): Mailer {
  return deferred<Mailer>(async () => {
    const { SqsEventSink, TestMailer } = await import('../shared/mail/test-mailer');
    const queueUrl = config.sesEventsQueueUrl;
    const sink = localEvents ?? (queueUrl ? new SqsEventSink((await import('../shared/runtime/queue-clients')).createSqsClient(config, clients), queueUrl) : NO_EVENTS);
    return new TestMailer(sink, { region: config.region, configurationSet: config.sesConfigurationSet });
  }, { send: true });
}

/**
 * What `pausingOnTenantRefusal` calls when SES refuses a paused tenant: the pause and who hears of
 * it, loaded the first time it happens (docs/reputation.md).
 */
function pauseOnTenantRefusal(dynamoDb: DynamoDBDocumentClient, tableName: string, parts: { logger: Logger; metrics: Metrics; outbox: WebhookOutbox | undefined }) {
  const { outbox, logger, metrics } = parts;
  // Loaded and built once per instance, by the first refusal; a failed load is tried again by the next.
  const pausing = once(async () => {
    const [{ DynamoDbReputationStore }, { DynamoDbWebhookStore }, { pauseOrganization }, { TENANT_PAUSED_REASON }] = await Promise.all([
      import('../shared/store/dynamodb-reputation-store'),
      import('../shared/webhooks/webhook-store'),
      import('../shared/reputation/pause-organization'),
      import('../shared/domain/reputation'),
    ]);
    const dependencies = {
      pauses: new DynamoDbReputationStore(dynamoDb, tableName),
      notify: outbox && { webhooks: new DynamoDbWebhookStore(dynamoDb, tableName), outbox },
      logger,
      metrics,
    };
    return (organizationId: string) => pauseOrganization(organizationId, { at: new Date().toISOString(), reason: TENANT_PAUSED_REASON }, dependencies);
  });
  return async (organizationId: string) => (await pausing())(organizationId);
}

/**
 * Built once per function instance (or local stack), never per request. The adapters most sends
 * never call (idempotency records, templates, suppression lists, daily quotas; schedules in
 * `createSchedulingDependencies`) are imported with the first request that does (`deferred`), so
 * a cold start reads none of their code (docs/performance.md, "Cold start"). The `organization.paused`
 * webhook of a pause after SES refuses a paused tenant goes where the schedule webhooks go: the
 * stack's webhook queue in AWS (`WEBHOOK_QUEUE_URL`), `local.outbox` locally.
 */
export function createDependencies(config: Config, clients: ClientOptions = {}, local: LocalParts = {}): SendDependencies {
  const dynamoDb = createDynamoDbClient(config, clients);
  const access = createAccessStore(dynamoDb, config);
  const mailer = new SesMailer(createSesClient(config, clients), config.sesConfigurationSet, config.sesTenants);
  const logger = createLogger();
  const metrics = createMetrics();
  const { tableName } = config;
  const scheduling = createSchedulingDependencies(config, dynamoDb, logger, clients, local);
  const { outbox } = scheduling;
  return {
    config,
    access,
    idempotency: deferred<IdempotencyStore>(
      async () => new (await import('../shared/store/dynamodb-idempotency-store')).DynamoDbIdempotencyStore(dynamoDb, tableName),
      { create: true, get: true, takeOver: true, checkpoints: true, checkpoint: true, complete: true },
    ),
    // Only with tenants can SES pause one Organization; without them nothing is wrapped.
    mailer: config.sesTenants ? pausingOnTenantRefusal(mailer, pauseOnTenantRefusal(dynamoDb, tableName, { logger, metrics, outbox }), logger) : mailer,
    suppressions: deferred<SuppressionList>(async () => new (await import('../shared/store/dynamodb-suppression-store')).DynamoDbSuppressionStore(dynamoDb, tableName), { suppressed: true }),
    pacer: new Pacer({ budget: new DynamoDbSendBudget(dynamoDb, tableName), quota: mailer, maxSendRate: config.sesMaxSendRate, now: Date.now }),
    dailyUsage: deferred<DailyUsage>(async () => new (await import('../shared/store/dynamodb-daily-usage')).DynamoDbDailyUsage(dynamoDb, tableName), { take: true, giveBack: true, used: true }),
    logger,
    metrics,
    now: Date.now,
    scheduling,
    templates: deferred<TemplateReader>(async () => new (await import('../shared/templates/template-store')).DynamoDbTemplateStore(dynamoDb, tableName), { read: true }),
    testMailer: lazyTestMailer(config, clients, local.testEvents),
  };
}
