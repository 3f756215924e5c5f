/**
 * The settings API's composition root: configuration in, clients and adapters out, for the
 * Lambda entry (`index.ts`), the local stack and the tests alike.
 */
import type { ClientOptions } from '../shared/runtime/clients';
import { createDynamoDbClient } from '../shared/runtime/clients';
import { createLogger, createMetrics } from '../shared/runtime/observability';
import { DynamoDbKeyStore } from '../shared/store/dynamodb-key-store';
import { DynamoDbReputationStore } from '../shared/store/dynamodb-reputation-store';
import type { MeConfig } from './config';
import type { MeDependencies } from './handler';
import { IdentityResolver } from './identity';

export function createMeDependencies(config: MeConfig, clients: ClientOptions = {}): MeDependencies {
  const dynamoDb = createDynamoDbClient(config, clients);
  return {
    keys: new DynamoDbKeyStore(dynamoDb, config.tableName),
    reputations: new DynamoDbReputationStore(dynamoDb, config.tableName),
    identity: new IdentityResolver({ issuer: config.oidcIssuer, userinfoEndpoint: config.oidcUserinfoEndpoint }),
    problemTypeBase: config.problemTypeBase,
    logger: createLogger(),
    metrics: createMetrics(),
    now: Date.now,
  };
}
