/**
 * The send-rate budget and the daily quota against dynalite: rounds chain, two stores on one
 * table (two function instances) never book the same turn and share the rate fairly, corrupt
 * state counts as idle, and concurrent requests never take more of a daily quota than it has.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { DeleteCommand, GetCommand, NumberValue, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { RoundAsk, Turn } from '../../functions/shared/domain/fair-share';
import { HORIZON_MS } from '../../functions/shared/domain/fair-share';
import { paceFor } from '../../functions/shared/domain/send-pace';
import { createDynamoDbClient } from '../../functions/shared/runtime/clients';
import { DynamoDbDailyUsage } from '../../functions/shared/store/dynamodb-daily-usage';
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
const ones = (n: number) => Array.from({ length: n }, () => ({ units: 1 }));
const ask = (now: number, overrides: Partial<RoundAsk> = {}): RoundAsk => ({
  organizationId: 'org-a',
  weight: 1,
  pace,
  messages: ones(5),
  now,
  lastSendAt: now + 60_000,
  ...overrides,
});
const numbers = (turns: readonly Turn[]) => turns.filter((t): t is number => typeof t === 'number');
const budgetItem = async () => (await client.send(new GetCommand({ TableName: h.config.tableName, Key: itemKey.sendBudget(), ConsistentRead: true }))).Item;

describe('DynamoDbSendBudget', () => {
  it('starts an idle budget now, and chains the next round after the first, keeping the state in one item', async () => {
    const budget = store();
    const now = 1_000_000;
    const first = await budget.book(ask(now));
    expect(numbers(first.turns)).toEqual([now, now, now, now, now]);
    const second = await budget.book(ask(now, { messages: ones(5) }));
    // Nine at once, then 100 ms apart: the next five are units 5..9 of the burst and beyond.
    expect(numbers(second.turns).map((t) => Math.round(t - now))).toEqual([0, 0, 0, 0, 100]);
    const item = await budgetItem();
    expect(item?.tat).toBe(now + 1_000);
    expect(item?.v).toBe(2);
    expect(item?.orgs['org-a'].held).toEqual([[now, now, 5], [now, now + 100, 5]]);
    expect(item?.expiresAt).toBeGreaterThan(now / 1_000);
  });

  it('never books one turn twice when two instances book at once', async () => {
    const [a, b] = [store(), store()];
    const now = Date.now();
    const asks = Array.from({ length: 16 }, (_, i) => ({ budget: i % 2 === 0 ? a : b, organizationId: `org-${i % 4}`, units: 1 + (i % 3) }));
    const rounds = await Promise.all(asks.map(({ budget, organizationId, units }) => budget.book(ask(now, { organizationId, messages: [{ units }] }))));
    // Every ask that got a turn moved the account's schedule by exactly its units.
    const booked = rounds.reduce((sum, round, i) => sum + (round.turns.length > 0 ? asks[i]!.units : 0), 0);
    const item = await budgetItem();
    expect(item?.tat).toBeCloseTo(now + booked * pace.intervalMs, 6);
    const heldTotal = Object.values(item?.orgs as Record<string, { held: number[][] }>).reduce((sum, org) => sum + org.held.reduce((s, [, , units]) => s + units!, 0), 0);
    expect(heldTotal).toBe(booked);
    // Those that lost every race were told to come back, not given a turn.
    for (const round of rounds.filter((r) => r.turns.length === 0)) expect(round.stop).toBe('wait');
  });

  it('gives a second Organization on another instance its share of a horizon the first is flooding', async () => {
    const [one, two] = [store(), store()];
    const now = Date.now();
    const flood = await one.book(ask(now, { organizationId: 'flood', messages: ones(200) }));
    expect(flood.stop).toBe('wait');
    const newcomer = await two.book(ask(now + 500, { organizationId: 'newcomer', messages: ones(10) }));
    expect(newcomer.stop).toBe('done');
    expect(Math.max(...numbers(newcomer.turns)) - (now + 500)).toBeLessThan(HORIZON_MS + 1_000);
    // The flood, back for more on its own instance (which last saw the item before the newcomer wrote), holds no more than half.
    const again = await one.book(ask(now + 600, { organizationId: 'flood', messages: ones(200) }));
    expect(again.turns.length).toBe(0);
    expect(again.stop).toBe('wait');
  });

  it.each([
    ['a TAT that is not a number', { tat: 'soon' }],
    ['a TAT far in the future', { tat: new NumberValue('1e30') }],
    ['a version that is not a number', { tat: 5, v: 'seven' }],
    ['Organization entries that are not entries', { tat: 5, v: 3, orgs: { x: 'y', z: { held: 'many' } } }],
  ])('treats a budget item with %s as idle, and writes a sound one over it', async (_, attributes) => {
    await client.send(new PutCommand({ TableName: h.config.tableName, Item: { ...itemKey.sendBudget(), ...attributes } }));
    const now = Date.now();
    const round = await store().book(ask(now, { messages: ones(2) }));
    expect(numbers(round.turns)).toEqual([now, now]);
    const item = await budgetItem();
    expect(item?.tat).toBe(now + 200);
    expect(Number.isInteger(item?.v)).toBe(true);
  });

  it('gives back turns that ended unused, so the next request goes at once', async () => {
    const budget = store();
    const now = Date.now();
    const round = await budget.book(ask(now, { messages: ones(15) }));
    await budget.release({ organizationId: 'org-a', holding: round.holding!, unused: 10, tatAfter: round.state.tat }, pace, now);
    const item = await budgetItem();
    expect(item?.tat).toBeCloseTo(now + 500, 6);
    expect(item?.orgs['org-a'].held).toEqual([[round.holding!.from, round.holding!.to, 5]]);
  });
});

describe('DynamoDbDailyUsage', () => {
  const usage = () => new DynamoDbDailyUsage(createDynamoDbClient(h.config), h.config.tableName);
  let org = 0;
  const nextOrg = () => `quota-org-${++org}`;

  it('takes whole messages in order while they fit, and no more', async () => {
    const id = nextOrg();
    expect(await usage().take(id, '2026-11-23', [3, 3], 10)).toEqual({ taken: 2, used: 6 });
    // Room for 4: the 2-recipient message fits, the 3 after it does not; what follows is refused too (request order).
    expect(await usage().take(id, '2026-11-23', [2, 3, 1], 10)).toEqual({ taken: 1, used: 8 });
    expect(await usage().take(id, '2026-11-23', [5], 10)).toEqual({ taken: 0, used: 8 });
    // Another day is another quota.
    expect(await usage().take(id, '2026-11-24', [5], 10)).toEqual({ taken: 1, used: 5 });
  });

  it('never lets concurrent requests on two instances take more than the quota between them', async () => {
    const id = nextOrg();
    const [a, b] = [usage(), usage()];
    const takes = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).take(id, '2026-11-23', [1, 1, 1], 25)));
    const taken = takes.reduce((sum, t) => sum + t.taken, 0);
    expect(taken).toBeLessThanOrEqual(25);
    expect(await a.used(id, '2026-11-23')).toBe(taken);
    // Nothing was refused while room was left: every unit of the quota went to someone.
    expect(taken).toBe(25);
  });

  it('gives back what was not sent', async () => {
    const id = nextOrg();
    await usage().take(id, '2026-11-23', [4, 4], 10);
    expect(await usage().giveBack(id, '2026-11-23', 4)).toBe(4);
    expect(await usage().used(id, '2026-11-23')).toBe(4);
  });
});
