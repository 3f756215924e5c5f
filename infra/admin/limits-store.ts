/**
 * The operator's side of an Organization's limits (CONTRACT section 11, item 2): read and set the
 * `limits` map on the Organization item (domain/org-limits.ts), and today's use of its daily
 * quota. The admin store (`DynamoDbAdminStore.limits`) hands it out.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { OrganizationLimits } from '../../functions/shared/domain/org-limits';
import { readLimits, utcDay } from '../../functions/shared/domain/org-limits';
import { isCanonicalUuid } from '../../functions/shared/domain/uuid';
import { conditionally } from '../../functions/shared/store/conditions';
import { DynamoDbDailyUsage } from '../../functions/shared/store/dynamodb-daily-usage';
import { InvalidArgumentError, RecordNotFoundError } from '../../functions/shared/store/records';
import { LIMITS_ATTRIBUTE, itemKey } from '../../functions/shared/store/table';

export type LimitsChange = { rate?: number | null; daily?: number | null; weight?: number; scheduled?: number | null };

export class OrganizationLimitsStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly now: () => Date,
  ) {}

  /** What the operator set for the Organization. */
  async get(organizationId: string): Promise<OrganizationLimits> {
    const id = this.idOf(organizationId);
    const { Item } = await this.client.send(new GetCommand({ TableName: this.tableName, Key: itemKey.organization(id), ConsistentRead: true }));
    if (!Item) throw new RecordNotFoundError(`no Organization with id ${id}`);
    return readLimits(Item[LIMITS_ATTRIBUTE]);
  }

  /**
   * Sets some of the Organization's limits; `null` removes one. The send path reads them with the
   * Organization item, so they apply within the auth cache's lifetime (AUTH_CACHE_SECONDS).
   */
  async set(organizationId: string, change: LimitsChange): Promise<OrganizationLimits> {
    const next: Record<string, number> = { ...(await this.get(organizationId)) };
    for (const key of ['rate', 'daily', 'weight', 'scheduled'] as const) {
      const value = change[key];
      if (value === null) delete next[key];
      else if (value !== undefined) next[key] = value;
    }
    const id = this.idOf(organizationId);
    await conditionally(
      () =>
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: itemKey.organization(id),
            UpdateExpression: `SET ${LIMITS_ATTRIBUTE} = :limits`,
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeValues: { ':limits': next },
          }),
        ),
      async (cause) => new RecordNotFoundError(`no Organization with id ${id}`, { cause }),
    );
    return readLimits(next);
  }

  /** Recipients the Organization has used of its daily quota today (UTC); counted only while it has one. */
  async usageToday(organizationId: string): Promise<{ day: string; used: number }> {
    const day = utcDay(this.now().getTime());
    return { day, used: await new DynamoDbDailyUsage(this.client, this.tableName).used(this.idOf(organizationId), day) };
  }

  private idOf(organizationId: string): string {
    if (!isCanonicalUuid(organizationId)) throw new InvalidArgumentError(`the Organization id must be a UUID (8-4-4-4-12 hex), got "${organizationId}"`);
    return organizationId.toLowerCase();
  }
}
