import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { StorageUnavailableProblem } from '../http/problems';
import type { AccessLookup, AccessStore, KeyRecord, OrganizationAccess } from './ports';
import { withStorageFaults } from './storage-errors';
import { itemKey } from './table';

const UNPROCESSED_RETRIES = 3;

type Item = Record<string, unknown>;

function stringSet(value: unknown): ReadonlySet<string> {
  return value instanceof Set ? (value as Set<string>) : new Set();
}

/** The request path's reads: the key and the Organization in a single BatchGetItem. */
export class DynamoDbAccessStore implements AccessStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async lookup(keyHash: string | undefined, organizationId: string | undefined): Promise<AccessLookup> {
    const keys = [
      ...(keyHash ? [itemKey.apiKey(keyHash)] : []),
      ...(organizationId ? [itemKey.organization(organizationId)] : []),
    ];
    if (keys.length === 0) return {};
    const items = await withStorageFaults(() => this.batchGet(keys));

    let key: KeyRecord | undefined;
    let organization: OrganizationAccess | undefined;
    for (const item of items) {
      if (item.sk === 'KEY' && typeof item.userId === 'string') key = { userId: item.userId };
      if (item.sk === 'ORG' && typeof item.organizationId === 'string') {
        organization = {
          organizationId: item.organizationId,
          members: stringSet(item.members),
          senders: stringSet(item.senders),
        };
      }
    }
    return { ...(key && { key }), ...(organization && { organization }) };
  }

  private async batchGet(keys: Item[]): Promise<Item[]> {
    const found: Item[] = [];
    let pending = keys;
    // BatchGetItem may hand back keys it did not read under load; they are retried, and a
    // lookup that still cannot complete is a storage fault (503), never a "not found" (401/403).
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > UNPROCESSED_RETRIES) throw new StorageUnavailableProblem();
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** attempt));
      const result = await this.client.send(
        new BatchGetCommand({
          RequestItems: {
            [this.tableName]: {
              Keys: pending,
              ConsistentRead: true,
              ProjectionExpression: 'sk, userId, organizationId, members, senders',
            },
          },
        }),
      );
      found.push(...(result.Responses?.[this.tableName] ?? []));
      pending = result.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
    }
    return found;
  }
}
