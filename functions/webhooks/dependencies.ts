/**
 * The webhook delivery function's composition root. In AWS the secrets open with the stack's KMS
 * key and retries are SQS visibility changes; the local stack passes its own sealer and queue.
 */
import type { ClientOptions } from '../shared/runtime/clients';
import { createDynamoDbClient } from '../shared/runtime/clients';
import type { Config } from '../shared/runtime/config';
import { createLogger, createMetrics } from '../shared/runtime/observability';
import { createKmsClient, createSqsClient } from '../shared/runtime/queue-clients';
import type { RetryScheduler } from '../shared/webhooks/queue';
import { SqsWebhookQueue } from '../shared/webhooks/queue';
import type { SecretSealer } from '../shared/webhooks/sealing';
import { KmsSealer } from '../shared/webhooks/sealing';
import { DynamoDbWebhookStore } from '../shared/webhooks/webhook-store';
import type { WebhookHandlerDependencies } from './handler';
import { createWebhookPoster } from './post';

export interface LocalWebhookParts {
  readonly sealer: SecretSealer;
  readonly retries: RetryScheduler;
}

export function createWebhookDependencies(config: Config, clients: ClientOptions = {}, local?: LocalWebhookParts): WebhookHandlerDependencies {
  return {
    webhooks: new DynamoDbWebhookStore(createDynamoDbClient(config, clients), config.tableName),
    ...(local ?? awsParts(config, clients)),
    // Plain http, and this machine at all, only on the local stack.
    allowLoopbackHttp: local !== undefined,
    post: createWebhookPoster({ allowLoopback: local !== undefined }),
    logger: createLogger(),
    metrics: createMetrics(),
    now: Date.now,
  };
}

function awsParts(config: Config, clients: ClientOptions): LocalWebhookParts {
  if (!config.webhookQueueUrl || !config.webhookKmsKeyId) throw new Error('WEBHOOK_QUEUE_URL and WEBHOOK_KMS_KEY_ID are required for the webhook function in AWS');
  return {
    sealer: new KmsSealer(createKmsClient(config, clients), config.webhookKmsKeyId),
    retries: new SqsWebhookQueue(createSqsClient(config, clients), config.webhookQueueUrl),
  };
}
