/**
 * The settings API's composition root: configuration in, clients and adapters out, for the
 * Lambda entry (`index.ts`), the local stack and the tests alike. With reveal on, API keys are
 * sealed with the KMS key `API_KEY_KMS_KEY_ID` names (bound to their user); the local stack
 * passes its own sealer (infra/local/sealing-key.ts) instead.
 */
import type { ClientOptions } from '../shared/runtime/clients';
import { createDynamoDbClient } from '../shared/runtime/clients';
import { ConfigError } from '../shared/runtime/config';
import { createLogger, createMetrics } from '../shared/runtime/observability';
import { createKmsClient } from '../shared/runtime/queue-clients';
import { DynamoDbActivityStore } from '../shared/store/dynamodb-activity-store';
import { DynamoDbDailyUsage } from '../shared/store/dynamodb-daily-usage';
import { DynamoDbKeyStore } from '../shared/store/dynamodb-key-store';
import { DynamoDbReputationStore } from '../shared/store/dynamodb-reputation-store';
import { DynamoDbSuppressionStore } from '../shared/store/dynamodb-suppression-store';
import type { LocalParts } from '../shared/schedules/dependencies';
import { createSchedulingDependencies } from '../shared/schedules/dependencies';
import { DynamoDbScheduleStore } from '../shared/schedules/schedule-store';
import { DynamoDbTemplateStore } from '../shared/templates/template-store';
import type { SecretSealer } from '../shared/webhooks/sealing';
import { KmsSealer } from '../shared/webhooks/sealing';
import type { MeConfig } from './config';
import type { MeDependencies } from './handler';
import { IdentityResolver } from './identity';

function keySealer(config: MeConfig, clients: ClientOptions, local: SecretSealer | undefined): SecretSealer | undefined {
  if (!config.apiKeyReveal) return undefined;
  if (local) return local;
  if (!config.apiKeyKmsKeyId) throw new ConfigError('Invalid configuration: API_KEY_KMS_KEY_ID is required while API_KEY_REVEAL is on (or set API_KEY_REVEAL=false)');
  return new KmsSealer(createKmsClient(config, clients), config.apiKeyKmsKeyId, 'userId');
}

/**
 * `localKeySealer`: the local stack's sealer for API keys (bound to `userId`), used instead of KMS;
 * `local`: the local stack's timer and webhook queue, in place of EventBridge Scheduler and SQS.
 */
export function createMeDependencies(config: MeConfig, clients: ClientOptions = {}, localKeySealer?: SecretSealer, local: LocalParts = {}): MeDependencies {
  const dynamoDb = createDynamoDbClient(config, clients);
  const logger = createLogger();
  // The same timer and webhook notices as the cancel function's: a schedule cancelled here is told of and disarmed alike.
  const { timer, notices } = createSchedulingDependencies(config, dynamoDb, logger, clients, local);
  return {
    keys: new DynamoDbKeyStore(dynamoDb, config.tableName),
    keySealer: keySealer(config, clients, localKeySealer),
    activity: new DynamoDbActivityStore(dynamoDb, config.tableName),
    suppressions: new DynamoDbSuppressionStore(dynamoDb, config.tableName),
    schedules: new DynamoDbScheduleStore(dynamoDb, config.tableName),
    timer,
    notices,
    templates: new DynamoDbTemplateStore(dynamoDb, config.tableName),
    usage: new DynamoDbDailyUsage(dynamoDb, config.tableName),
    reputations: new DynamoDbReputationStore(dynamoDb, config.tableName),
    identity: new IdentityResolver({ issuer: config.oidcIssuer, userinfoEndpoint: config.oidcUserinfoEndpoint }),
    problemTypeBase: config.problemTypeBase,
    logger,
    metrics: createMetrics(),
    now: Date.now,
  };
}
