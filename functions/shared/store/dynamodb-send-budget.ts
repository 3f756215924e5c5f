/**
 * The account's send-rate budget in the service's table: one item whose `tat` is the theoretical
 * arrival time of the next recipient (domain/send-pace.ts). Every request on every instance
 * reserves its recipients by moving `tat` on with one conditional write, so a request of 100
 * messages costs one write, not 100:
 *
 * - busy bucket (`tat` ahead of now): `SET tat = tat + units × interval`, on condition that the
 *   reservation still ends by the request's deadline;
 * - idle bucket (`tat` in the past, or no item yet): `SET tat = now + units × interval`;
 * - neither (busy past the deadline): one read of `tat`, then the units that do fit.
 *
 * Concurrent writers never lose an update: each write is conditional on what it assumed.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Pace } from '../domain/send-pace';
import { latestStartFor, unitsThatFit } from '../domain/send-pace';
import { unlessConditionFails } from './conditions';
import type { Reservation, SendBudget } from './ports';
import { withStorageFaults } from './storage-errors';
import { itemKey } from './table';

/** Conditional writes lost to other writers before a reservation gives up (and reports nothing reserved). */
const MAX_ROUNDS = 6;
/** The item outlives any reservation; an idle account's item expires and is made anew. */
const KEEP_SECONDS = 24 * 60 * 60;

export class DynamoDbSendBudget implements SendBudget {
  /** Which write to try first: whichever worked last on this instance. */
  private lastTat = 0;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  reserve(units: number, pace: Pace, now: number, lastSendAt: number): Promise<Reservation> {
    return withStorageFaults(() => this.reserveUnits(units, pace, now, lastSendAt));
  }

  private async reserveUnits(units: number, pace: Pace, now: number, lastSendAt: number): Promise<Reservation> {
    // Even an idle bucket cannot send more than this by the deadline.
    let want = Math.min(units, unitsThatFit(now, now, lastSendAt, pace));
    let tat = this.lastTat;
    for (let round = 0; round < MAX_ROUNDS && want > 0; round++) {
      const ways = tat > now ? [this.advance, this.restart] : [this.restart, this.advance];
      for (const way of ways) {
        const start = await way.call(this, want, pace, now, lastSendAt);
        if (start !== undefined) {
          this.lastTat = start + want * pace.intervalMs;
          return { start, units: want };
        }
      }
      tat = (await this.read()) ?? now;
      want = Math.min(want, unitsThatFit(tat, now, lastSendAt, pace));
    }
    return { start: Math.max(tat, now), units: 0 };
  }

  /** Busy bucket: reserves after the recipients already booked, if they all still fit. */
  private async advance(units: number, pace: Pace, now: number, lastSendAt: number): Promise<number | undefined> {
    const span = units * pace.intervalMs;
    let updated: number | undefined;
    const made = await unlessConditionFails(async () => {
      const { Attributes } = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: itemKey.sendBudget(),
          UpdateExpression: 'SET tat = tat + :span, expiresAt = :expires',
          ConditionExpression: 'tat >= :now AND tat <= :latest',
          ExpressionAttributeValues: {
            ':span': span,
            ':now': now,
            ':latest': latestStartFor(units, lastSendAt, pace),
            ':expires': Math.ceil(now / 1_000) + KEEP_SECONDS,
          },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      updated = Number(Attributes?.tat);
    });
    return made && updated !== undefined && Number.isFinite(updated) ? updated - span : undefined;
  }

  /** Idle bucket: nothing booked from now on, so the reservation starts now. */
  private async restart(units: number, pace: Pace, now: number): Promise<number | undefined> {
    const made = await unlessConditionFails(() =>
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: itemKey.sendBudget(),
          UpdateExpression: 'SET tat = :tat, expiresAt = :expires',
          ConditionExpression: 'attribute_not_exists(tat) OR tat < :now',
          ExpressionAttributeValues: { ':tat': now + units * pace.intervalMs, ':now': now, ':expires': Math.ceil(now / 1_000) + KEEP_SECONDS },
        }),
      ),
    );
    return made ? now : undefined;
  }

  private async read(): Promise<number | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.tableName, Key: itemKey.sendBudget(), ConsistentRead: true }));
    const tat = Number(Item?.tat);
    return Number.isFinite(tat) ? tat : undefined;
  }
}
