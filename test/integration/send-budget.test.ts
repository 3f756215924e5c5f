/**
 * The send-rate budget against dynalite: reservations chain, respect the deadline, and two
 * stores on one table (two function instances) never book the same turn.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { paceFor, unitSendTime } from '../../functions/shared/domain/send-pace';
import { createDynamoDbClient } from '../../functions/shared/runtime/clients';
import { DynamoDbSendBudget } from '../../functions/shared/store/dynamodb-send-budget';
import { itemKey } from '../../functions/shared/store/table';
import type { Harness } from '../support/harness';
import { startHarness } from '../support/harness';

let h!: Harness;
let client: DynamoDBDocumentClient;

beforeAll(async () => {
  h = await startHarness();
  client = createDynamoDbClient(h.config);
});
afterAll(async () => {
  client.destroy();
  await h.stop();
});
beforeEach(async () => {
  await client.send(new DeleteCommand({ TableName: h.config.tableName, Key: itemKey.sendBudget() }));
});

const store = () => new DynamoDbSendBudget(createDynamoDbClient(h.config), h.config.tableName);
const pace = paceFor(10); // 100 ms apart; bursts of 9 (one second's worth less the 100 ms slack)

describe('DynamoDbSendBudget', () => {
  it('starts an idle budget now, and chains the next reservation after the first', async () => {
    const budget = store();
    const now = 1_000_000;
    expect(await budget.reserve(5, pace, now, now + 60_000)).toEqual({ start: now, units: 5 });
    expect(await budget.reserve(3, pace, now, now + 60_000)).toEqual({ start: now + 500, units: 3 });
    const { Item } = await client.send(new GetCommand({ TableName: h.config.tableName, Key: itemKey.sendBudget(), ConsistentRead: true }));
    expect(Item?.tat).toBe(now + 800);
    expect(Item?.expiresAt).toBeGreaterThan(now / 1_000);
  });

  it('lets the first burst go at once and spaces the rest by the interval', async () => {
    const now = 2_000_000;
    const { start, units } = await store().reserve(14, pace, now, now + 60_000);
    const times = Array.from({ length: units }, (_, k) => unitSendTime(start, k, pace, now) - now);
    expect(times.slice(0, 9)).toEqual(Array(9).fill(0));
    expect(times.slice(9).map(Math.round)).toEqual([100, 200, 300, 400, 500]);
  });

  it('reserves only what can be sent by the deadline, and nothing once it is booked up', async () => {
    const budget = store();
    const now = 3_000_000;
    // By now + 1000 ms: the burst of 9 at once, then one every 100 ms: 19 in all.
    expect(await budget.reserve(50, pace, now, now + 1_000)).toEqual({ start: now, units: 19 });
    const none = await budget.reserve(5, pace, now, now + 1_000);
    expect(none.units).toBe(0);
    expect(none.start).toBe(now + 1_900); // the TAT after 19 units: room again at TAT − tolerance
  });

  it('treats a budget whose turns are all in the past as idle', async () => {
    const budget = store();
    await budget.reserve(10, pace, 4_000_000, 4_060_000);
    const later = 4_000_000 + 10_000;
    expect(await budget.reserve(2, pace, later, later + 1_000)).toEqual({ start: later, units: 2 });
  });

  it('never books one turn twice when two instances reserve at once', async () => {
    const [a, b] = [store(), store()];
    const now = Date.now();
    const asks = Array.from({ length: 24 }, (_, i) => ({ budget: i % 2 === 0 ? a : b, units: 1 + (i % 4) }));
    const reservations = await Promise.all(asks.map(({ budget, units }) => budget.reserve(units, pace, now, now + 600_000)));
    expect(reservations.every((r, i) => r.units === asks[i]!.units)).toBe(true);
    // Each reservation is a span [start, start + units × interval); together they tile the budget.
    const spans = reservations.map((r) => [r.start, r.start + r.units * pace.intervalMs] as const).sort((x, y) => x[0] - y[0]);
    for (let i = 1; i < spans.length; i++) expect(spans[i]![0]).toBeCloseTo(spans[i - 1]![1], 6);
    const total = asks.reduce((sum, ask) => sum + ask.units, 0);
    expect(spans.at(-1)![1] - spans[0]![0]).toBeCloseTo(total * pace.intervalMs, 6);
  });
});
