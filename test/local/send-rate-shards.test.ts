/**
 * The split send budget through two local stacks (CONTRACT section 7 items 2 and 5): at a rate
 * above one shard's, both instances book on shard items in the shared table, never on the one
 * item, and together they stay within the rate the local SES gate enforces.
 *
 * Judged by counts, not by the clock or by every message being Sent: on a machine running the
 * whole suite, a request can miss its deadline or meet a storage timeout (503, nothing sent).
 * What must hold whatever the load: SES got exactly what the API reported Sent, the gate refused
 * (almost) nothing, and the budget lived on the shards.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { shardCount } from '../../functions/shared/domain/budget-shards';
import { itemKey } from '../../functions/shared/store/table';
import type { RateGateStats } from '../../infra/local/ses-rate-gate';
import type { TestStack } from './helpers';
import { clearEmails, send, sentEmails, useTwoInstances } from './helpers';

const RATE = 150;

function messages(organizationId: string, count: number, tag: string) {
  return {
    OrganizationId: organizationId,
    Messages: Array.from({ length: count }, (_, i) => ({ From: 'noreply@example.com', To: [`r${i}@example.org`], Subject: `${tag} ${i}`, TextContent: 'Split budget.' })),
  };
}

const gateStats = async (sesUrl: string) => (await (await fetch(`${sesUrl}/rate-limit`)).json()) as RateGateStats;

/** Each message's status, or the answer's status for every message of a request refused whole. */
async function outcomes(response: Response, count: number): Promise<string[]> {
  const body = (await response.json()) as { Messages?: { Status: string }[] };
  return body.Messages?.map((m) => m.Status) ?? Array.from({ length: count }, () => String(response.status));
}

describe('a split send budget on two instances', () => {
  // The second learns the rate from GetAccount, through the same gate.
  const stacks = useTwoInstances({ sesMaxSendRate: RATE });
  let first!: TestStack;
  let second!: TestStack;
  beforeAll(() => {
    ({ first, second } = stacks);
  });

  it('books on the shard items, and keeps both instances together within the rate with SES getting exactly what was Sent', async () => {
    await clearEmails(first.sesUrl);
    const before = await gateStats(first.sesUrl);
    const demo = first.demo!;
    // Past the burst of the whole account (150): a 60-message request on each instance, and
    // one-message requests on both beside them, so the shards have to pace and lend.
    const asks = [
      ...[0, 1].map((i) => ({ stack: i === 0 ? first : second, count: 60, tag: `big-${i}` })),
      ...Array.from({ length: 40 }, (_, i) => ({ stack: i % 2 === 0 ? first : second, count: 1, tag: `one-${i}` })),
    ];
    const results = await Promise.all(asks.map(async ({ stack, count, tag }) => ({ tag, count, response: await send(stack, demo.apiKey, messages(demo.organizationId, count, tag)) })));
    const statuses = await Promise.all(results.map(({ response, count }) => outcomes(response, count)));
    for (const { response } of results) expect([200, 207, 429, 503]).toContain(response.status);
    const sent = statuses.flat().filter((s) => s === 'Sent').length;
    const after = await gateStats(first.sesUrl);
    // Nothing lost or doubled, whatever did not make it.
    expect(after.accepted - before.accepted).toBe(sent);
    expect(await sentEmails(first.sesUrl)).toHaveLength(sent);
    // The gate refused (almost) nothing. (This alone does not prove the shards' pacing: a loaded
    // machine sends slower than 150/s whatever the budget allows. The turns themselves are checked
    // against SES's bucket in test/integration/send-budget-shards.test.ts.)
    expect(after.throttled - before.throttled).toBeLessThanOrEqual(4);
    // Both instances sent (a stack that could not book at all would send nothing).
    for (const stack of [0, 1]) expect(statuses.filter((_, i) => i % 2 === stack).flat()).toContain('Sent');
    // The test's own reader, without the product's 2 s request timeout: a slow read right after
    // the burst is no finding.
    const client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1', endpoint: first.dynamodbEndpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }));
    try {
      const read = async (shard?: number) => (await client.send(new GetCommand({ TableName: first.tableName, Key: itemKey.sendBudget(shard), ConsistentRead: true }))).Item;
      expect(await read()).toBeUndefined();
      const shards = await Promise.all(Array.from({ length: shardCount(RATE) }, (_, k) => read(k)));
      expect(shards.filter((item) => item !== undefined).length).toBeGreaterThanOrEqual(1);
      for (const item of shards) expect(JSON.stringify(item ?? {}).length).toBeLessThan(4 * 1024);
    } finally {
      client.destroy();
    }
  }, 90_000);
});
