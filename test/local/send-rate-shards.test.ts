/**
 * The split budget through two local stacks (CONTRACT section 7 items 2 and 5): at a rate above
 * one shard's, both instances book on shard items in the shared table, and together they stay
 * within the rate the local SES gate enforces, with every message Sent.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { shardCount } from '../../functions/shared/domain/budget-shards';
import { itemKey } from '../../functions/shared/store/table';
import type { RateGateStats } from '../../infra/local/ses-rate-gate';
import type { TestStack } from './helpers';
import { clearEmails, send, sentEmails, startTestStack } from './helpers';

const RATE = 150;

function messages(organizationId: string, count: number, tag: string) {
  return {
    OrganizationId: organizationId,
    Messages: Array.from({ length: count }, (_, i) => ({ From: 'noreply@example.com', To: [`r${i}@example.org`], Subject: `${tag} ${i}`, TextContent: 'Split budget.' })),
  };
}

const gateStats = async (sesUrl: string) => (await (await fetch(`${sesUrl}/rate-limit`)).json()) as RateGateStats;

describe('a split send budget on two instances', () => {
  let first: TestStack;
  let second: TestStack;

  beforeAll(async () => {
    first = await startTestStack({ sesMaxSendRate: RATE });
    second = await startTestStack({ dynamodbEndpoint: first.dynamodbEndpoint, sesEndpoint: first.sesUrl, tableName: first.tableName });
  }, 60_000);
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
  });

  it('books on shard items and keeps both instances together within the rate', async () => {
    await clearEmails(first.sesUrl);
    const before = await gateStats(first.sesUrl);
    const demo = first.demo!;
    // 240 messages at 150/s (two shards): past the burst, so the shards have to pace.
    const sent = await Promise.all([0, 1, 2, 3].map((i) => send(i % 2 === 0 ? first : second, demo.apiKey, messages(demo.organizationId, 60, `split-${i}`))));
    const bodies = (await Promise.all(sent.map(async (response) => (await response.json()) as { Messages?: { Status: string; Error?: { Code: string } }[] })));
    const outcomes = bodies.flatMap((body, i) => body.Messages?.map((m) => m.Error?.Code ?? m.Status) ?? [`${sent[i]!.status} ${JSON.stringify(body).slice(0, 200)}`]);
    expect(outcomes.filter((m) => m !== 'Sent')).toEqual([]);
    for (const response of sent) expect(response.status).toBe(200);
    const after = await gateStats(first.sesUrl);
    // Shards that each paced at the whole rate would have sent at several times it.
    expect(after.throttled - before.throttled).toBeLessThanOrEqual(4);
    expect(after.accepted - before.accepted).toBe(240);
    expect(await sentEmails(first.sesUrl)).toHaveLength(240);
    // The test's own reader, without the product's 2 s request timeout: right after the burst the
    // emulator is still busy with the events of 240 messages, and a slow read here is no finding.
    const client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1', endpoint: first.dynamodbEndpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }));
    try {
      const read = async (shard?: number) => (await client.send(new GetCommand({ TableName: first.tableName, Key: itemKey.sendBudget(shard), ConsistentRead: true }))).Item;
      expect(await read()).toBeUndefined();
      const shards = await Promise.all(Array.from({ length: shardCount(RATE) }, (_, k) => read(k)));
      expect(shards.filter((item) => item !== undefined).length).toBeGreaterThanOrEqual(2);
    } finally {
      client.destroy();
    }
  }, 60_000);
});
