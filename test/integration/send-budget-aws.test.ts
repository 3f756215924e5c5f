/**
 * `DynamoDbSendBudget` against moto_server's DynamoDB (moto 5), for what dynalite does not do:
 * a conditional write that loses answers with the item as the winner left it
 * (`ReturnValuesOnConditionCheckFailure`), so the store tries again on it with no read, and what
 * it books then comes after the winner's turns.
 *
 * Needs `moto_server` on the PATH; without it the suite is skipped and says so (under CI=true it
 * fails instead: see test/support/moto.ts).
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { shardCount } from '../../functions/shared/domain/budget-shards';
import { createDynamoDbClient } from '../../functions/shared/runtime/clients';
import { DynamoDbSendBudget } from '../../functions/shared/store/dynamodb-send-budget';
import { ensureTable } from '../../infra/local/emulators';
import { describeWithMoto, startMoto } from '../support/moto';
import { countCommands } from '../support/command-counts';
import { roundAsker } from '../support/round-ask';
import type { Moto } from '../support/moto';

const TABLE = 'email-send-api-budget-test';
const RATE = 150;

describeWithMoto('DynamoDbSendBudget (moto_server)', () => {
  let moto: Moto;
  const clients: DynamoDBDocumentClient[] = [];

  /** A document client on moto that counts the commands it sends, by name. */
  const countingClient = () => {
    const client = createDynamoDbClient({ region: moto.config.region, dynamodbEndpoint: moto.config.endpoint }, { credentials: moto.config.credentials });
    const calls = countCommands(client);
    clients.push(client);
    return { client, calls };
  };

  beforeAll(async () => {
    moto = await startMoto();
    const tables = new DynamoDBClient(moto.config);
    await ensureTable(tables, TABLE);
    tables.destroy();
  }, 30_000);
  afterAll(async () => {
    for (const client of clients) client.destroy();
    await moto?.stop();
  });

  const ask = roundAsker(RATE, shardCount(RATE));

  it('after another instance wrote its shard, loses one race and books on the item it got back, with no read', async () => {
    const mine = countingClient();
    const theirs = countingClient();
    const [a, b] = [new DynamoDbSendBudget(mine.client, TABLE, () => 0), new DynamoDbSendBudget(theirs.client, TABLE, () => 0)];
    const now = Date.now();
    await a.book(ask(now));
    const other = await b.book(ask(now, { organizationId: 'org-b', messages: Array.from({ length: 10 }, () => ({ units: 1 })) }));
    const readsBefore = mine.calls.get('GetItemCommand') ?? 0;
    const round = await a.book(ask(now));
    expect(round.shard).toBe(other.shard);
    // Its turn is the one after the other instance's ten: it booked on the state the other wrote …
    expect(round.turns[0]).toBeGreaterThanOrEqual(Math.max(...other.turns.map(Number)));
    expect(round.state.tat).toBeCloseTo(other.state.tat + 1_000 / (RATE / shardCount(RATE)), 6);
    // … which came back with the lost race: two writes, no read.
    expect(mine.calls.get('GetItemCommand') ?? 0).toBe(readsBefore);
    expect(mine.calls.get('UpdateItemCommand')).toBe(3);
  });
});
