/**
 * Each Organization's suppression list (CONTRACT section 10): one item per address in the
 * Organization's `SUPP#` partition, plus a count on the Organization item, which the send path
 * reads anyway. A count of 0 means the send path reads nothing more; otherwise it reads the
 * request's recipients from the partition in one BatchGetItem.
 *
 * The count is kept an upper bound, never an under-count, without transactions (dynalite has
 * none): it goes up *before* an address is added and down only *after* one is removed. An
 * interruption between the two steps leaves it one too high, which costs one needless read per
 * request; one too low would send to a suppressed address.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mailboxOf } from '../domain/email-address';
import { batchGetAll } from './batch-get';
import { unlessConditionFails } from './conditions';
import { queryAll } from './query-all';
import type { SuppressionList } from './ports';
import { SUPPRESSION_COUNT_ATTRIBUTE, itemKey, suppressionPartition } from './table';

export interface Suppression {
  readonly address: string;
  readonly reason: 'Bounce' | 'Complaint';
  /** ISO 8601: when the event that caused it happened. */
  readonly at: string;
}

export class DynamoDbSuppressionStore implements SuppressionList {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async suppressed(organizationId: string, addresses: readonly string[]): Promise<ReadonlySet<string>> {
    const unique = [...new Set(addresses.map(mailboxOf))];
    if (unique.length === 0) return new Set();
    const items = await batchGetAll(this.client, this.tableName, unique.map((address) => itemKey.suppression(organizationId, address)), { projection: 'sk' });
    return new Set(items.map((item) => String(item.sk)));
  }

  /** Adds the addresses not yet on the list; false for an Organization that does not exist (nothing added). */
  async add(organizationId: string, suppressions: readonly Suppression[]): Promise<boolean> {
    for (const suppression of suppressions) {
      if (!(await this.count(organizationId, 1))) return false;
      const added = await unlessConditionFails(() =>
        this.client.send(
          new PutCommand({
            TableName: this.tableName,
            Item: { ...itemKey.suppression(organizationId, suppression.address), reason: suppression.reason, at: suppression.at },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        ),
      );
      // Already suppressed: the first suppression's reason and time stay.
      if (!added) await this.count(organizationId, -1);
    }
    return true;
  }

  /** False when the address was not on the list. */
  async remove(organizationId: string, address: string): Promise<boolean> {
    const removed = await unlessConditionFails(() =>
      this.client.send(
        new DeleteCommand({ TableName: this.tableName, Key: itemKey.suppression(organizationId, address), ConditionExpression: 'attribute_exists(pk)' }),
      ),
    );
    if (removed) await this.count(organizationId, -1);
    return removed;
  }

  async list(organizationId: string): Promise<Suppression[]> {
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': suppressionPartition(organizationId) },
      ConsistentRead: true,
    });
    return items.map((item) => ({ address: String(item.sk), reason: item.reason === 'Complaint' ? 'Complaint' : 'Bounce', at: String(item.at) }));
  }

  /** Moves the Organization's count; false when the Organization does not exist. */
  private count(organizationId: string, by: 1 | -1): Promise<boolean> {
    return unlessConditionFails(() =>
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: itemKey.organization(organizationId),
          UpdateExpression: 'ADD #count :by',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#count': SUPPRESSION_COUNT_ATTRIBUTE },
          ExpressionAttributeValues: { ':by': by },
        }),
      ),
    );
  }
}
