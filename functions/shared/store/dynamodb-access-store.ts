import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { readKeyPolicy } from '../domain/key-policy';
import { unlessConditionFails } from './conditions';
import type { AccessLookup, AccessStore, KeyRecord, OrganizationAccess } from './ports';
import { readLimits } from '../domain/org-limits';
import { readTracking } from '../mail/tracking';
import { batchGetAll } from './batch-get';
import { PAUSE_PROJECTION, readPause } from './organization-pause';
import { withStorageFaults } from './storage-errors';
import { LAST_USED_ATTRIBUTE, LIMITS_ATTRIBUTE, SUPPRESSION_COUNT_ATTRIBUTE, TRACKING_ATTRIBUTE, USER_KEY_PROJECTION, itemKey } from './table';

function stringSet(value: unknown): ReadonlySet<string> {
  return value instanceof Set ? (value as Set<string>) : new Set();
}

/**
 * The request path's reads: the key and the Organization in a single BatchGetItem; for a key
 * found, then its user's current key hash. A key authenticates only while its user names it
 * (the user item is where a key change commits, dynamodb-key-store.ts): a key item left behind
 * by an interrupted or raced change authenticates nothing. That read also brings what the key
 * may do (its scopes, senders and expiry are stored beside its hash), so limiting keys costs no
 * round trip. With the auth cache that second read is made on a miss only, so a warm instance
 * still makes no round trip at all.
 */
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
        projection: `sk, userId, ${LAST_USED_ATTRIBUTE}, organizationId, members, senders, ${SUPPRESSION_COUNT_ATTRIBUTE}, ${LIMITS_ATTRIBUTE}, ${TRACKING_ATTRIBUTE}, ${PAUSE_PROJECTION}`,
      }),
    );

    let candidate: { readonly userId: string; readonly lastUsedAt?: string } | undefined;
    let organization: OrganizationAccess | undefined;
    for (const item of items) {
      if (item.sk === 'KEY' && typeof item.userId === 'string') {
        candidate = { userId: item.userId, ...(typeof item[LAST_USED_ATTRIBUTE] === 'string' && { lastUsedAt: item[LAST_USED_ATTRIBUTE] }) };
      }
      if (item.sk === 'ORG' && typeof item.organizationId === 'string') {
        organization = {
          organizationId: item.organizationId,
          members: stringSet(item.members),
          senders: stringSet(item.senders),
          suppressions: Number(item[SUPPRESSION_COUNT_ATTRIBUTE] ?? 0) || 0,
          ...(item[LIMITS_ATTRIBUTE] !== undefined && { limits: readLimits(item[LIMITS_ATTRIBUTE]) }),
          ...(item[TRACKING_ATTRIBUTE] !== undefined && { tracking: readTracking(item[TRACKING_ATTRIBUTE]) }),
          paused: readPause(item),
        };
      }
    }
    const key = candidate && keyHash ? await this.held(candidate, keyHash) : undefined;
    return { ...(key && { key }), ...(organization && { organization }) };
  }

  /**
   * Once an hour at most per key: a conditional write that loses to an equal or later hour
   * (another instance recorded it) and then writes nothing.
   */
  async recordUse(keyHash: string, hour: string): Promise<void> {
    await unlessConditionFails(() =>
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: itemKey.apiKey(keyHash),
          UpdateExpression: 'SET #used = :hour',
          ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(#used) OR #used < :hour)',
          ExpressionAttributeNames: { '#used': LAST_USED_ATTRIBUTE },
          ExpressionAttributeValues: { ':hour': hour },
        }),
      ),
    );
  }

  /**
   * The key's record when its user's item names this key hash as its key, with what the key may
   * do (the function may read these attributes of a user and nothing else).
   */
  private async held(candidate: { readonly userId: string; readonly lastUsedAt?: string }, keyHash: string): Promise<KeyRecord | undefined> {
    const [user] = await withStorageFaults(() => batchGetAll(this.client, this.tableName, [itemKey.user(candidate.userId)], { projection: USER_KEY_PROJECTION }));
    return user?.keyHash === keyHash ? { ...candidate, policy: readKeyPolicy(user) } : undefined;
  }
}
