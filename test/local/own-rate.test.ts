/**
 * An Organization's own rate is a hard cap (CONTRACT section 11, item 5; security audit round 3,
 * finding 5): on an otherwise idle 20/s account, where turns would go unused, an Organization
 * limited to 1/s or 5/s still gets no more than that, from one instance or from two sharing the
 * table. Measured where it matters, at the SES endpoint: when each message arrived there.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Tenant, TestStack } from './helpers';
import { adminEnv, adminJson, clearEmails, provisionTenant, send, sentEmails, useTwoInstances } from './helpers';

const ACCOUNT_RATE = 20;

function messages(organizationId: string, count: number, tag: string) {
  return {
    OrganizationId: organizationId,
    Messages: Array.from({ length: count }, (_, i) => ({ From: 'noreply@example.com', To: [`r${i}@example.org`], Subject: `${tag} ${i}`, TextContent: 'At its own rate.' })),
  };
}

async function statuses(response: Response): Promise<string[]> {
  return ((await response.json()) as { Messages: { Status: string; Error?: { Code: string } }[] }).Messages.map((m) => m.Error?.Code ?? m.Status);
}

/** When SES received each message with this tag (epoch seconds), in order. */
async function arrivals(sesUrl: string, tag: string): Promise<number[]> {
  return (await sentEmails(sesUrl)).filter((e) => e.subject.startsWith(`${tag}`)).map((e) => e.at).sort((a, b) => a - b);
}

describe("an Organization's own rate on an idle account, one instance and two", () => {
  const stacks = useTwoInstances({ sesMaxSendRate: ACCOUNT_RATE });
  let first!: TestStack;
  let second!: TestStack;
  let tenant: Tenant;
  let env: Record<string, string>;

  beforeAll(async () => {
    ({ first, second } = stacks);
    env = adminEnv(first);
    tenant = await provisionTenant(env);
  }, 60_000);

  // However the messages are spread, `k` of them after the first take at least (k - burst)/rate
  // seconds at a rate with that burst. The SES store stamps arrivals in whole seconds, hence the
  // one second of slack there; the client's own clock (ms) gives the contract's figure.
  const leastSeconds = (k: number, rate: number) => (k - Math.max(1, Math.floor(rate))) / rate;

  it.each([
    [1, 1, 16],
    [5, 1, 16],
    [1, 2, 8],
    [5, 2, 24],
  ])('holds --rate %d on %d instance(s) for %d one-recipient messages', async (rate, instances, count) => {
    await adminJson(env, 'org', 'limits', '--org', tenant.organizationId, '--rate', String(rate));
    await clearEmails(first.sesUrl);
    const tag = `own-${rate}-${instances}`;
    try {
      const stacks = instances === 1 ? [first] : [first, second];
      const started = Date.now();
      const responses = await Promise.all(stacks.map((stack, i) => send(stack, tenant.apiKey, messages(tenant.organizationId, count / stacks.length, `${tag}-${i}`))));
      const elapsed = Date.now() - started;
      for (const response of responses) expect(await statuses(response)).toEqual(Array(count / stacks.length).fill('Sent'));
      // The contract's own example: 16 messages at --rate 1 take at least 14 s, even here.
      expect(elapsed).toBeGreaterThanOrEqual(leastSeconds(count - 1, rate) * 1_000);
      const at = await arrivals(first.sesUrl, tag);
      expect(at).toHaveLength(count);
      for (let i = 0; i < at.length; i++) {
        for (let j = i + 1; j < at.length; j++) expect(at[j]! - at[i]!).toBeGreaterThanOrEqual(leastSeconds(j - i, rate) - 1);
      }
    } finally {
      await adminJson(env, 'org', 'limits', '--org', tenant.organizationId, '--rate', '0');
    }
  }, 60_000);
});
