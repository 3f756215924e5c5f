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
import type { LocalParts } from '../shared/schedules/dependencies';
import { createSchedulingDependencies } from '../shared/schedules/dependencies';
import { createAccessStore } from '../shared/store/cached-access-store';
import { DynamoDbIdempotencyStore } from '../shared/store/dynamodb-idempotency-store';
import { DynamoDbSendBudget } from '../shared/store/dynamodb-send-budget';
import { DynamoDbSuppressionStore } from '../shared/store/dynamodb-suppression-store';
import { Pacer } from './pacing';
import type { SendDependencies } from './send-request';

export type { LocalParts } from '../shared/schedules/dependencies';

/** Built once per function instance (or local stack), never per request. */
export function createDependencies(config: Config, clients: ClientOptions = {}, local: LocalParts = {}): SendDependencies {
  const dynamoDb = createDynamoDbClient(config, clients);
  const access = createAccessStore(dynamoDb, config);
  const mailer = new SesMailer(createSesClient(config, clients), config.sesConfigurationSet);
  const logger = createLogger();
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
    scheduling: createSchedulingDependencies(config, dynamoDb, logger, clients, local),
  };
}
