/**
 * BatchGetItem of any number of keys: in requests of at most 100 keys (DynamoDB's limit), with
 * the keys DynamoDB hands back unread under load asked for again. A read that still cannot
 * complete is a storage fault (503), never a "not found": a missing key record would wrongly be a
 * 401, a missing suppression a message sent to an address that must not get it.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { StorageUnavailableProblem } from '../http/problems';

const UNPROCESSED_RETRIES = 3;
const MAX_KEYS = 100;

export type Item = Record<string, unknown>;

export interface BatchGetOptions {
  /** Attributes to read; all when absent. */
  readonly projection?: string;
  readonly names?: Readonly<Record<string, string>>;
  readonly consistent?: boolean;
}

export async function batchGetAll(client: DynamoDBDocumentClient, tableName: string, keys: readonly Item[], options: BatchGetOptions): Promise<Item[]> {
  const chunks: Item[][] = [];
  for (let i = 0; i < keys.length; i += MAX_KEYS) chunks.push(keys.slice(i, i + MAX_KEYS));
  const pages = await Promise.all(chunks.map((chunk) => batchGetChunk(client, tableName, chunk, options)));
  return pages.flat();
}

async function batchGetChunk(client: DynamoDBDocumentClient, tableName: string, keys: Item[], options: BatchGetOptions): Promise<Item[]> {
  const found: Item[] = [];
  let pending = keys;
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt > UNPROCESSED_RETRIES) throw new StorageUnavailableProblem();
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** attempt));
    const result = await client.send(
      new BatchGetCommand({
        RequestItems: {
          [tableName]: {
            Keys: pending,
            ConsistentRead: options.consistent ?? true,
            ...(options.projection && { ProjectionExpression: options.projection }),
            ...(options.names && { ExpressionAttributeNames: { ...options.names } }),
          },
        },
      }),
    );
    found.push(...(result.Responses?.[tableName] ?? []));
    pending = result.UnprocessedKeys?.[tableName]?.Keys ?? [];
  }
  return found;
}
