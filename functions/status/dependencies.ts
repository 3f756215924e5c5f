/** The status function's composition root: the send function's access store (and auth cache), and the delivery records. */
import type { ClientOptions } from '../shared/runtime/clients';
import { createDynamoDbClient } from '../shared/runtime/clients';
import type { Config } from '../shared/runtime/config';
import { createLogger, createMetrics } from '../shared/runtime/observability';
import { createAccessStore } from '../shared/store/cached-access-store';
import { DynamoDbScheduleStore } from '../shared/schedules/schedule-store';
import { DynamoDbDeliveryStore } from '../shared/store/dynamodb-delivery-store';
import type { StatusHandlerDependencies } from './handler';

export function createStatusDependencies(config: Config, clients: ClientOptions = {}): StatusHandlerDependencies {
  const dynamoDb = createDynamoDbClient(config, clients);
  return {
    config,
    access: createAccessStore(dynamoDb, config),
    deliveries: new DynamoDbDeliveryStore(dynamoDb, config.tableName),
    schedules: new DynamoDbScheduleStore(dynamoDb, config.tableName),
    logger: createLogger(),
    metrics: createMetrics(),
    now: Date.now,
  };
}
