/**
 * The sweep of key items nobody holds (the admin CLI's `key sweep`). A key works only while its
 * user item names its hash (dynamodb-key-store.ts explains the three writes of a key change), so a
 * `KEY#<hash>` item its user does not name, left by an interrupted change or by the rotate race of
 * earlier versions, authenticates nothing; the sweep removes it. A scan of the key partitions: an
 * operator's command, never on a request path.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { unlessConditionFails } from './conditions';
import { scanAll } from './query-all';
import type { StoredUser } from './stored-user';
import { PARTITIONS, itemKey } from './table';

/**
 * A key item younger than this may belong to a change still in flight (written, not yet
 * committed), so the sweep leaves it alone. Longer than any function or CLI call runs.
 */
export const SWEEP_MIN_AGE_MS = 15 * 60_000;

export interface KeySweep {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  /** Key items created at or after this ISO time are left alone. */
  readonly before: string;
  /** The user an item names, undefined when there is none. */
  readonly userOf: (userId: string) => Promise<StoredUser | undefined>;
}

/** Removes every key item older than `before` whose user does not name its hash; returns how many. */
export async function sweepOrphanKeys({ client, tableName, before, userOf }: KeySweep): Promise<number> {
  // Read whole first (a key item is two short attributes), then deleted one by one.
  const items = await scanAll(client, {
    TableName: tableName,
    FilterExpression: 'begins_with(pk, :key) AND sk = :sk AND (attribute_not_exists(createdAt) OR createdAt < :before)',
    ExpressionAttributeValues: { ':key': PARTITIONS.apiKey, ':sk': 'KEY', ':before': before },
    ProjectionExpression: 'pk, userId',
  });
  let removed = 0;
  for (const item of items) {
    const keyHash = String(item.pk).slice(PARTITIONS.apiKey.length);
    const holder = typeof item.userId === 'string' ? await userOf(item.userId) : undefined;
    if (holder?.keyHash === keyHash) continue;
    const deleted = await unlessConditionFails(() =>
      client.send(
        new DeleteCommand({
          TableName: tableName,
          Key: itemKey.apiKey(keyHash),
          // Unchanged since it was read: a (vanishingly unlikely) new item of that hash stays.
          ConditionExpression: item.userId === undefined ? 'attribute_not_exists(userId)' : 'userId = :user',
          ...(item.userId !== undefined && { ExpressionAttributeValues: { ':user': item.userId } }),
        }),
      ),
    );
    if (deleted) removed++;
  }
  return removed;
}
