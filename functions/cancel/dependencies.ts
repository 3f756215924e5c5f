/** The cancel function's composition root: the access store (and auth cache), the schedules, their timer and webhooks. */
import type { ClientOptions } from '../shared/runtime/clients';
import { createDynamoDbClient } from '../shared/runtime/clients';
import type { Config } from '../shared/runtime/config';
import { createLogger, createMetrics } from '../shared/runtime/observability';
import type { LocalParts } from '../shared/schedules/dependencies';
import { createSchedulingDependencies } from '../shared/schedules/dependencies';
import { createAccessStore } from '../shared/store/cached-access-store';
import type { CancelHandlerDependencies } from './handler';

export function createCancelDependencies(config: Config, clients: ClientOptions = {}, local: LocalParts = {}): CancelHandlerDependencies {
  const dynamoDb = createDynamoDbClient(config, clients);
  const logger = createLogger();
  return { config, access: createAccessStore(dynamoDb, config), ...createSchedulingDependencies(config, dynamoDb, logger, clients, local), logger, metrics: createMetrics(), now: Date.now };
}
