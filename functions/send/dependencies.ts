/**
 * The one composition root of the send function: configuration in, clients and adapters out.
 * The Lambda entry (`index.ts`), the scheduled-send function, the local stack and the test
 * harness all build their dependencies here, each from a `Config` of its own, so they cannot
 * wire it differently.
 */
import { TENANT_PAUSED_REASON } from '../shared/domain/reputation';
import { SesMailer } from '../shared/mail/ses-mailer';
import type { Mailer } from '../shared/mail/ports';
import type { EventSink } from '../shared/mail/test-mailer';
import { pauseOrganization } from '../shared/reputation/pause-organization';
import type { ClientOptions } from '../shared/runtime/clients';
import { createDynamoDbClient, createSesClient } from '../shared/runtime/clients';
import type { Config } from '../shared/runtime/config';
import { deferred } from '../shared/runtime/deferred';
import { createLogger, createMetrics } from '../shared/runtime/observability';
import type { LocalParts } from '../shared/schedules/dependencies';
import { createSchedulingDependencies } from '../shared/schedules/dependencies';
import { createAccessStore } from '../shared/store/cached-access-store';
import { DynamoDbDailyUsage } from '../shared/store/dynamodb-daily-usage';
import { DynamoDbIdempotencyStore } from '../shared/store/dynamodb-idempotency-store';
import { DynamoDbReputationStore } from '../shared/store/dynamodb-reputation-store';
import { DynamoDbSendBudget } from '../shared/store/dynamodb-send-budget';
import { DynamoDbSuppressionStore } from '../shared/store/dynamodb-suppression-store';
import { DynamoDbTemplateStore } from '../shared/templates/template-store';
import { DynamoDbWebhookStore } from '../shared/webhooks/webhook-store';
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
 * Built once per function instance (or local stack), never per request. `local.outbox`: where the
 * `organization.paused` webhook goes when SES refuses a paused tenant (the local stack's queue;
 * none in AWS, see functions/shared/reputation/pause-organization.ts).
 */
export function createDependencies(config: Config, clients: ClientOptions = {}, local: LocalParts = {}): SendDependencies {
  const dynamoDb = createDynamoDbClient(config, clients);
  const access = createAccessStore(dynamoDb, config);
  const mailer = new SesMailer(createSesClient(config, clients), config.sesConfigurationSet, config.sesTenants);
  const logger = createLogger();
  const metrics = createMetrics();
  const { outbox } = local;
  const pauseDependencies = {
    pauses: new DynamoDbReputationStore(dynamoDb, config.tableName),
    notify: outbox && { webhooks: new DynamoDbWebhookStore(dynamoDb, config.tableName), outbox },
    logger,
    metrics,
  };
  return {
    config,
    access,
    idempotency: new DynamoDbIdempotencyStore(dynamoDb, config.tableName),
    // Only with tenants can SES pause one Organization; without them nothing is wrapped.
    mailer:
      config.sesTenants
        ? pausingOnTenantRefusal(mailer, (organizationId) => pauseOrganization(organizationId, { at: new Date().toISOString(), reason: TENANT_PAUSED_REASON }, pauseDependencies))
        : mailer,
    suppressions: new DynamoDbSuppressionStore(dynamoDb, config.tableName),
    pacer: new Pacer({ budget: new DynamoDbSendBudget(dynamoDb, config.tableName), quota: mailer, maxSendRate: config.sesMaxSendRate, now: Date.now }),
    dailyUsage: new DynamoDbDailyUsage(dynamoDb, config.tableName),
    logger,
    metrics,
    now: Date.now,
    scheduling: createSchedulingDependencies(config, dynamoDb, logger, clients, local),
    templates: new DynamoDbTemplateStore(dynamoDb, config.tableName),
    testMailer: lazyTestMailer(config, clients, local.testEvents),
  };
}
