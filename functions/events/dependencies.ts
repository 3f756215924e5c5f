/**
 * The events function's composition root: configuration in, stores and the webhook queue out.
 * The local stack passes its own outbox (an in-process queue) instead of SQS.
 */
import type { ClientOptions } from '../shared/runtime/clients';
import { createDynamoDbClient } from '../shared/runtime/clients';
import type { Config } from '../shared/runtime/config';
import { createLogger, createMetrics } from '../shared/runtime/observability';
import { createSqsClient } from '../shared/runtime/queue-clients';
import { DynamoDbActivityStore } from '../shared/store/dynamodb-activity-store';
import { DynamoDbDeliveryStore } from '../shared/store/dynamodb-delivery-store';
import { DynamoDbEngagementStore } from '../shared/store/dynamodb-engagement-store';
import { DynamoDbReputationStore } from '../shared/store/dynamodb-reputation-store';
import { DynamoDbSuppressionStore } from '../shared/store/dynamodb-suppression-store';
import type { WebhookOutbox } from '../shared/webhooks/queue';
import { SqsWebhookQueue } from '../shared/webhooks/queue';
import { DynamoDbWebhookStore } from '../shared/webhooks/webhook-store';
import type { EventsDependencies } from './record-event';

export function createEventsDependencies(config: Config, clients: ClientOptions = {}, outbox?: WebhookOutbox): EventsDependencies {
  const dynamoDb = createDynamoDbClient(config, clients);
  return {
    deliveries: new DynamoDbDeliveryStore(dynamoDb, config.tableName),
    engagement: new DynamoDbEngagementStore(dynamoDb, config.tableName),
    suppressions: new DynamoDbSuppressionStore(dynamoDb, config.tableName),
    activity: new DynamoDbActivityStore(dynamoDb, config.tableName),
    webhooks: new DynamoDbWebhookStore(dynamoDb, config.tableName),
    outbox: outbox ?? sqsOutbox(config, clients),
    retentionDays: config.statusRetentionDays,
    reputation: new DynamoDbReputationStore(dynamoDb, config.tableName),
    thresholds: config.reputation,
    logger: createLogger(),
    metrics: createMetrics(),
    now: Date.now,
  };
}

function sqsOutbox(config: Config, clients: ClientOptions): WebhookOutbox {
  if (!config.webhookQueueUrl) throw new Error('WEBHOOK_QUEUE_URL is required for the events function in AWS');
  return new SqsWebhookQueue(createSqsClient(config, clients), config.webhookQueueUrl);
}
