/**
 * The send budget split over shards (domain/budget-shards.ts) in the table, against dynalite:
 * at an account rate above one shard's, two instances book one-message rounds on shards drawn
 * two at a time, and together they never exceed the account's rate; an Organization with a rate
 * of its own books on its home shard, where that rate holds whole; a shard that cannot be read is
 * stepped around, and a round that can read none is a 503 with nothing booked. One instance writes
 * the rounds its requests make at once together, and reads nothing while its own shard has room.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { shardCount } from '../../functions/shared/domain/budget-shards';
import { StorageUnavailableProblem } from '../../functions/shared/http/problems';
import { createDynamoDbClient } from '../../functions/shared/runtime/clients';
import { DynamoDbSendBudget } from '../../functions/shared/store/dynamodb-send-budget';
import { itemKey } from '../../functions/shared/store/table';
import type { Harness } from '../support/harness';
import { countCommands } from '../support/command-counts';
import { roundAsker } from '../support/round-ask';
import { startHarness } from '../support/harness';
import { fitsBucket } from '../support/bucket';

const RATE = 150;
const SHARDS = shardCount(RATE);
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
  for (const shard of [undefined, ...Array.from({ length: SHARDS }, (_, k) => k)]) {
    await client.send(new DeleteCommand({ TableName: h.config.tableName, Key: itemKey.sendBudget(shard) }));
  }
});

/** Draws that walk through the shards in a fixed order, so every run books the same way. */
const walk = (start: number) => {
  let i = start;
  return () => ((i++ * 7) % 97) / 97;
};
const ask = roundAsker(RATE, SHARDS);
/** A client that counts the DynamoDB commands it sends, by name (GetItemCommand, UpdateCommand's UpdateItemCommand …). */
function countingClient(): { client: DynamoDBDocumentClient; calls: Map<string, number> } {
  const counted = createDynamoDbClient(h.config);
  const calls = countCommands(counted);
  return { client: counted, calls };
}
const item = async (shard?: number) => (await client.send(new GetCommand({ TableName: h.config.tableName, Key: itemKey.sendBudget(shard), ConsistentRead: true }))).Item;

describe('DynamoDbSendBudget split over shards', () => {
  it('spreads two instances over the shards and never lets them together past the account rate', async () => {
    const [a, b] = [new DynamoDbSendBudget(createDynamoDbClient(h.config), h.config.tableName, walk(0)), new DynamoDbSendBudget(createDynamoDbClient(h.config), h.config.tableName, walk(50))];
    const now = Date.now();
    const turns: number[] = [];
    const shardsUsed = new Set<number | undefined>();
    // Two bursts' worth of one-message requests, half on each instance, all asking at once.
    const rounds = await Promise.all(Array.from({ length: 2 * RATE }, (_, i) => (i % 2 === 0 ? a : b).book(ask(now, { organizationId: `org-${i % 50}` }))));
    for (const round of rounds) {
      for (const turn of round.turns) if (typeof turn === 'number') turns.push(turn);
      if (round.turns.length > 0) shardsUsed.add(round.shard);
    }
    expect(turns.length).toBeGreaterThan(RATE);
    expect(fitsBucket(turns, RATE)).toBe(true);
    // Every shard took its part, and the one item of an unsplit budget was never written.
    expect([...shardsUsed].sort()).toEqual(Array.from({ length: SHARDS }, (_, k) => k));
    expect(await item()).toBeUndefined();
    for (let k = 0; k < SHARDS; k++) {
      const stored = await item(k);
      expect(JSON.stringify(stored).length).toBeLessThan(4 * 1024);
    }
  }, 60_000);

  it('books an Organization with a rate of its own on one home shard, where its rate holds on every instance', async () => {
    const [a, b] = [new DynamoDbSendBudget(createDynamoDbClient(h.config), h.config.tableName, walk(0)), new DynamoDbSendBudget(createDynamoDbClient(h.config), h.config.tableName, walk(3))];
    const now = Date.now();
    const rounds = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).book(ask(now, { organizationId: 'capped', cap: 5 }))));
    const booked = rounds.filter((round) => round.turns.length > 0);
    expect(new Set(booked.map((round) => round.shard)).size).toBe(1);
    const turns = booked.flatMap((round) => round.turns.filter((t): t is number => typeof t === 'number'));
    // A burst of its own rate at most, then it waits.
    expect(turns.length).toBeLessThanOrEqual(5);
    expect(fitsBucket(turns, 5)).toBe(true);
  });

  it('steps around a shard it cannot read (and stops preferring it), and answers 503 with nothing booked when it can read none of those it drew', async () => {
    const faulty = createDynamoDbClient(h.config);
    const down = itemKey.sendBudget(0).pk;
    faulty.middlewareStack.add(
      (next) => async (args) => {
        const input = args.input as { Key?: { pk?: { S?: string } | string } };
        const pk = typeof input.Key?.pk === 'string' ? input.Key.pk : input.Key?.pk?.S;
        if (pk === down) throw Object.assign(new Error('shard 0 is unavailable'), { name: 'InternalServerError', $metadata: { httpStatusCode: 500 } });
        return next(args);
      },
      { step: 'initialize', name: 'shardZeroDown' },
    );
    const now = Date.now();
    // Draws 0 then 0.5: shards 0 (down) and 1; it books on 1.
    const draws = [0, 0.5];
    const stepsAround = new DynamoDbSendBudget(faulty, h.config.tableName, () => draws.shift() ?? 0);
    const round = await stepsAround.book(ask(now));
    expect(round.shard).toBe(1);
    expect(round.turns).toHaveLength(1);
    // Shard 1 is its own now: later rounds that draw only shard 0 (down) still book, on 1.
    const again = await stepsAround.book(ask(now));
    expect(again.shard).toBe(1);
    expect(again.turns).toHaveLength(1);
    // Draws 0 and 0: shard 0 twice; nothing can be read, nothing is booked.
    const stuck = new DynamoDbSendBudget(faulty, h.config.tableName, () => 0);
    await expect(stuck.book(ask(now))).rejects.toBeInstanceOf(StorageUnavailableProblem);
    expect(await item(0)).toBeUndefined();
    faulty.destroy();
  });

  it('writes the rounds one instance makes at once together, each with a turn of its own, within the rate', async () => {
    const { client: counted, calls } = countingClient();
    const budget = new DynamoDbSendBudget(counted, h.config.tableName, walk(0));
    const now = Date.now();
    const rounds = await Promise.all(Array.from({ length: 40 }, (_, i) => budget.book(ask(now, { organizationId: `org-${i % 10}` }))));
    const turns = rounds.flatMap((round) => round.turns.filter((t): t is number => typeof t === 'number'));
    expect(turns).toHaveLength(40);
    expect(fitsBucket(turns, RATE)).toBe(true);
    // One conditional write per batch of rounds (up to 8), not one per round: a round per request
    // would be 40 writes queued one behind the other.
    expect(calls.get('UpdateItemCommand')).toBeLessThanOrEqual(40 / 8 + 1);
    // What was written is what the rounds booked: the shards' schedules moved by 40 turns in all.
    const stored = await Promise.all(Array.from({ length: SHARDS }, (_, k) => item(k)));
    const held = stored.flatMap((s) => Object.values((s?.orgs ?? {}) as Record<string, { held: number[][] }>)).flatMap((org) => org.held);
    expect(held.reduce((sum, [, , units]) => sum + units!, 0)).toBe(40);
    counted.destroy();
  });

  it('reads nothing before booking while its own shard has room, and books on it', async () => {
    const { client: counted, calls } = countingClient();
    const budget = new DynamoDbSendBudget(counted, h.config.tableName, walk(0));
    const start = Date.now();
    const first = await budget.book(ask(start));
    const readsAtFirst = calls.get('GetItemCommand') ?? 0;
    // A round a second apart each: the shard this instance wrote last has room again every time.
    const later = [];
    for (let i = 1; i <= 5; i++) later.push(await budget.book(ask(start + i * 1_000, { organizationId: `org-${i}` })));
    expect(calls.get('GetItemCommand') ?? 0).toBe(readsAtFirst);
    expect(calls.get('UpdateItemCommand')).toBe(6);
    expect(new Set(later.map((round) => round.shard))).toEqual(new Set([first.shard]));
    counted.destroy();
  });

  it('after another instance wrote its shard, loses one race, reads once and books after the other\'s turns', async () => {
    const { client: counted, calls } = countingClient();
    const otherClient = createDynamoDbClient(h.config);
    const mine = new DynamoDbSendBudget(counted, h.config.tableName, () => 0);
    const other = new DynamoDbSendBudget(otherClient, h.config.tableName, () => 0);
    const now = Date.now();
    await mine.book(ask(now));
    const theirs = await other.book(ask(now, { messages: Array.from({ length: 10 }, () => ({ units: 1 })) }));
    const reads = calls.get('GetItemCommand') ?? 0;
    const round = await mine.book(ask(now));
    expect(round.shard).toBe(theirs.shard);
    // Its turn comes after the other instance's ten: it booked on the state the other wrote.
    expect(round.turns[0]).toBeGreaterThanOrEqual(Math.max(...theirs.turns.map(Number)));
    expect(calls.get('GetItemCommand')).toBe(reads + 1);
    expect(calls.get('UpdateItemCommand')).toBe(3);
    counted.destroy();
    otherClient.destroy();
  });
});
