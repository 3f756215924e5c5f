/**
 * Each Organization's webhook: one item (`HOOK#<orgId>`) with the URL and the sealed signing
 * secret. The admin CLI writes it; the events function reads it to decide whether there is
 * anything to deliver, and the delivery function reads it at each attempt, so a changed URL or
 * secret applies to deliveries still waiting.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { unlessConditionFails } from '../store/conditions';
import { itemKey } from '../store/table';

export interface WebhookConfig {
  readonly organizationId: string;
  readonly url: string;
  /** Sealed (see sealing.ts), never the plain secret. */
  readonly sealedSecret: string;
  readonly createdAt: string;
}

export interface WebhookConfigs {
  get(organizationId: string): Promise<WebhookConfig | undefined>;
}

export class DynamoDbWebhookStore implements WebhookConfigs {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async get(organizationId: string): Promise<WebhookConfig | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.tableName, Key: itemKey.webhook(organizationId), ConsistentRead: true }));
    if (typeof Item?.url !== 'string' || typeof Item.secret !== 'string') return undefined;
    return { organizationId: organizationId.toLowerCase(), url: Item.url, sealedSecret: Item.secret, createdAt: String(Item.createdAt) };
  }

  async put(config: WebhookConfig): Promise<void> {
    await this.client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...itemKey.webhook(config.organizationId), url: config.url, secret: config.sealedSecret, createdAt: config.createdAt },
      }),
    );
  }

  /** False when the Organization had no webhook. */
  remove(organizationId: string): Promise<boolean> {
    return unlessConditionFails(() =>
      this.client.send(new DeleteCommand({ TableName: this.tableName, Key: itemKey.webhook(organizationId), ConditionExpression: 'attribute_exists(pk)' })),
    );
  }
}
