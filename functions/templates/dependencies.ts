/** The templates function's composition root: the access store (and auth cache) and the template store. */
import type { ClientOptions } from '../shared/runtime/clients';
import { createDynamoDbClient } from '../shared/runtime/clients';
import type { Config } from '../shared/runtime/config';
import { createLogger, createMetrics } from '../shared/runtime/observability';
import { createAccessStore } from '../shared/store/cached-access-store';
import { DynamoDbTemplateStore } from '../shared/templates/template-store';
import type { TemplateHandlerDependencies } from './handler';

export function createTemplateDependencies(config: Config, clients: ClientOptions = {}): TemplateHandlerDependencies {
  const dynamoDb = createDynamoDbClient(config, clients);
  return {
    config,
    access: createAccessStore(dynamoDb, config),
    templates: new DynamoDbTemplateStore(dynamoDb, config.tableName),
    logger: createLogger(),
    metrics: createMetrics(),
    now: Date.now,
  };
}
