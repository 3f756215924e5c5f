import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AccessLookup, AccessStore, KeyRecord, OrganizationAccess } from './ports';
import { batchGetAll } from './batch-get';
import { PAUSE_PROJECTION, readPause } from './organization-pause';
import { withStorageFaults } from './storage-errors';
import { SUPPRESSION_COUNT_ATTRIBUTE, itemKey } from './table';

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
    // BatchGetItem even for one key: the function's IAM allows reads of these partitions with it alone.
    const items = await withStorageFaults(() =>
      batchGetAll(this.client, this.tableName, keys, {
        projection: `sk, userId, organizationId, members, senders, ${SUPPRESSION_COUNT_ATTRIBUTE}, ${PAUSE_PROJECTION}`,
      }),
    );

    let key: KeyRecord | undefined;
    let organization: OrganizationAccess | undefined;
    for (const item of items) {
      if (item.sk === 'KEY' && typeof item.userId === 'string') key = { userId: item.userId };
      if (item.sk === 'ORG' && typeof item.organizationId === 'string') {
        organization = {
          organizationId: item.organizationId,
          members: stringSet(item.members),
          senders: stringSet(item.senders),
          suppressions: Number(item[SUPPRESSION_COUNT_ATTRIBUTE] ?? 0) || 0,
          paused: readPause(item),
        };
      }
    }
    return { ...(key && { key }), ...(organization && { organization }) };
  }
}
