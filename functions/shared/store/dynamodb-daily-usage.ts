/**
 * An Organization's use of its daily quota (CONTRACT section 11, item 2): one counter item per
 * Organization and UTC day, moved with conditional `ADD`s so that concurrent requests on every
 * instance never take more than the quota between them. A request costs one write when all its
 * messages fit (the common case), a read and a second write when only some do, and one more write
 * at the end to give back what was not sent. The item expires two days after its day.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unlessConditionFails } from './conditions';
import type { DailyUsage } from './ports';
import { withStorageFaults } from './storage-errors';
import { itemKey } from './table';

const MAX_TRIES = 6;
const KEEP_SECONDS = 2 * 24 * 60 * 60;

export class DynamoDbDailyUsage implements DailyUsage {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  take(organizationId: string, day: string, units: readonly number[], limit: number): Promise<{ taken: number; used: number }> {
    return withStorageFaults(async () => {
      let fits = 0;
      for (let room = limit; fits < units.length && units[fits]! <= room; ) room -= units[fits++]!;
      for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
        const amount = units.slice(0, fits).reduce((sum, n) => sum + n, 0);
        if (fits === 0 || amount === 0) return { taken: fits, used: await this.used(organizationId, day) };
        const used = await this.add(organizationId, day, amount, limit - amount);
        if (used !== undefined) return { taken: fits, used };
        // Not all of it fits: as many messages, in order, as the quota still has room for.
        const now = await this.used(organizationId, day);
        let room = limit - now;
        fits = 0;
        while (fits < units.length && units[fits]! <= room) room -= units[fits++]!;
      }
      return { taken: 0, used: await this.used(organizationId, day) };
    });
  }

  giveBack(organizationId: string, day: string, units: number): Promise<number> {
    return withStorageFaults(async () => (units > 0 ? ((await this.add(organizationId, day, -units)) ?? 0) : this.used(organizationId, day)));
  }

  used(organizationId: string, day: string): Promise<number> {
    return withStorageFaults(async () => {
      const { Item } = await this.client.send(new GetCommand({ TableName: this.tableName, Key: itemKey.dailyUsage(organizationId, day), ConsistentRead: true }));
      const used = Number(Item?.used);
      return Number.isFinite(used) ? Math.max(0, used) : 0;
    });
  }

  /** Adds `amount` if the day's use is at most `atMost` before it; the use after, or undefined if not. */
  private async add(organizationId: string, day: string, amount: number, atMost?: number): Promise<number | undefined> {
    let after: number | undefined;
    const made = await unlessConditionFails(async () => {
      const { Attributes } = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: itemKey.dailyUsage(organizationId, day),
          UpdateExpression: 'ADD used :amount SET expiresAt = :expires',
          ...(atMost !== undefined && { ConditionExpression: 'attribute_not_exists(used) OR used <= :atMost' }),
          ExpressionAttributeValues: {
            ':amount': amount,
            ':expires': Math.floor(Date.parse(`${day}T00:00:00Z`) / 1_000) + KEEP_SECONDS,
            ...(atMost !== undefined && { ':atMost': atMost }),
          },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      after = Number(Attributes?.used);
    });
    return made && after !== undefined && Number.isFinite(after) ? after : undefined;
  }
}
