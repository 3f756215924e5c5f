/**
 * Organizations isolated from each other on a laptop (CONTRACT section 11, items 1 and 2): through
 * local stacks, with the admin CLI as an operator would use it. A flooding Organization on one
 * instance does not hold up another's small request on a second instance; daily quotas refuse
 * what does not fit with QuotaExceeded and the RateLimit fields; an Organization's own rate paces
 * it even where the account has none.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { RateGateStats } from '../../infra/local/ses-rate-gate';
import { DAY_MS, clearOfTurn } from '../support/clock';
import type { Tenant, TestStack } from './helpers';
import { admin, adminEnv, adminJson, clearEmails, provisionTenant, send, sentEmails, startTestStack, useTwoInstances } from './helpers';

const RATE = 10;

function messages(organizationId: string, count: number, tag: string, extra: Record<string, unknown> = {}) {
  return {
    OrganizationId: organizationId,
    Messages: Array.from({ length: count }, (_, i) => ({ From: 'noreply@example.com', To: [`r${i}@example.org`], Subject: `${tag} ${i}`, TextContent: 'Shared fairly.', ...extra })),
  };
}

async function statuses(response: Response): Promise<string[]> {
  return ((await response.json()) as { Messages: { Status: string; Error?: { Code: string } }[] }).Messages.map((m) => m.Error?.Code ?? m.Status);
}

describe('fair share of the account rate, across two instances', () => {
  const stacks = useTwoInstances({ sesMaxSendRate: RATE });
  let first!: TestStack;
  let second!: TestStack;
  let newcomer: Tenant;

  beforeAll(async () => {
    ({ first, second } = stacks);
    newcomer = await provisionTenant(adminEnv(first));
  }, 60_000);

  it("sends a newcomer's small request within its share while another Organization floods, and SES gets exactly what was Sent", async () => {
    await clearEmails(first.sesUrl);
    const before = (await (await fetch(`${first.sesUrl}/rate-limit`)).json()) as RateGateStats;
    const demo = first.demo!;
    // The flood: 3 × 40 at 10/s, 12 s of mail on the first instance.
    const flood = Promise.all([0, 1, 2].map((i) => send(first, demo.apiKey, messages(demo.organizationId, 40, `flood-${i}`))));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const floodBefore = (await sentEmails(first.sesUrl)).length;
    const small = await send(second, newcomer.apiKey, messages(newcomer.organizationId, 5, 'newcomer'));
    expect(small.status).toBe(200);
    expect(await statuses(small)).toEqual(Array(5).fill('Sent'));
    const floodStatuses = (await Promise.all((await flood).map(statuses))).flat();
    const sent = floodStatuses.filter((s) => s === 'Sent').length + 5;
    const after = (await (await fetch(`${first.sesUrl}/rate-limit`)).json()) as RateGateStats;
    expect(after.throttled - before.throttled).toBeLessThanOrEqual(2);
    const stored = await sentEmails(first.sesUrl);
    expect(stored).toHaveLength(sent);
    // Judged by the order SES received the mail, not by a clock (a busy machine slows everything
    // alike; the latency itself is the benchmark's). First come, first served, every flood message
    // still waiting when the newcomer asked (about 110 of 120) would reach SES before its five; with
    // its share, only the flood's booked horizon (2 s at 10/s: 20 turns) and what was in flight do,
    // then the two alternate.
    expect(floodBefore).toBeLessThan(60);
    const subjects = stored.map((email) => email.subject);
    const lastOfNewcomer = subjects.lastIndexOf('newcomer 4');
    const floodAhead = subjects.slice(floodBefore, lastOfNewcomer).filter((subject) => subject.startsWith('flood')).length;
    expect(floodAhead).toBeLessThanOrEqual(35);
  }, 60_000);
});

describe('per-Organization limits', () => {
  let stack: TestStack;
  let env: Record<string, string>;
  let tenant: Tenant;

  beforeAll(async () => {
    stack = await startTestStack();
    env = adminEnv(stack);
    tenant = await provisionTenant(env);
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it('refuses what does not fit the daily quota with QuotaExceeded and Retry-After to the reset, and says where the quota stands', async () => {
    await clearOfTurn(DAY_MS, 15_000);
    expect(await adminJson(env, 'org', 'limits', '--org', tenant.organizationId, '--daily', '5')).toEqual({ organizationId: tenant.organizationId, rate: null, daily: 5, weight: 1, scheduled: 10_000 });
    await clearEmails(stack.sesUrl);

    const three = await send(stack, tenant.apiKey, messages(tenant.organizationId, 3, 'quota-a'));
    expect(three.status).toBe(200);
    expect(three.headers.get('ratelimit-policy')).toBe('"daily";q=5;w=86400');
    expect(three.headers.get('ratelimit')).toMatch(/^"daily";r=2;t=\d+$/);

    // An expired message takes nothing of the quota; of the rest, two fit.
    const body = messages(tenant.organizationId, 4, 'quota-b');
    body.Messages.unshift({ ...body.Messages[0]!, Subject: 'quota-b expired', ExpirationDateTime: '2020-01-01 00:00:00' } as (typeof body.Messages)[number]);
    const four = await send(stack, tenant.apiKey, body);
    expect(four.status).toBe(207);
    expect(await statuses(four)).toEqual(['Expired', 'Sent', 'Sent', 'QuotaExceeded', 'QuotaExceeded']);
    const secondsToMidnight = (Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1) - Date.now()) / 1_000;
    expect(Math.abs(Number(four.headers.get('retry-after')) - secondsToMidnight)).toBeLessThan(5);
    expect(four.headers.get('ratelimit')).toMatch(/^"daily";r=0;t=\d+$/);

    const none = await send(stack, tenant.apiKey, messages(tenant.organizationId, 1, 'quota-c'));
    expect(none.status).toBe(429);
    const problem = ((await none.json()) as { Messages: { Error: { Code: string; Message: string; Retryable: boolean } }[] }).Messages[0]!.Error;
    expect(problem).toMatchObject({ Code: 'QuotaExceeded', Retryable: true, Message: expect.stringContaining('daily quota of 5') });
    expect(Number(none.headers.get('retry-after'))).toBeGreaterThan(0);

    expect((await sentEmails(stack.sesUrl)).map((e) => e.subject).sort()).toEqual(['quota-a 0', 'quota-a 1', 'quota-a 2', 'quota-b 0', 'quota-b 1']);
    const shown = await adminJson(env, 'org', 'show', '--org', tenant.organizationId);
    expect(shown).toMatchObject({ id: tenant.organizationId, limits: { daily: 5, rate: null, weight: 1 }, usage: { used: 5, remaining: 0 } });

    // Removing the quota lifts it, and the answers no longer carry the fields.
    await adminJson(env, 'org', 'limits', '--org', tenant.organizationId, '--daily', '0');
    const free = await send(stack, tenant.apiKey, messages(tenant.organizationId, 1, 'quota-d'));
    expect(free.status).toBe(200);
    expect(free.headers.get('ratelimit')).toBeNull();
  }, 30_000);

  it("paces an Organization at its own rate even where the account's rate is unknown", async () => {
    await adminJson(env, 'org', 'limits', '--org', tenant.organizationId, '--rate', '4');
    try {
      const started = Date.now();
      const response = await send(stack, tenant.apiKey, messages(tenant.organizationId, 8, 'own-rate'));
      expect(response.status).toBe(200);
      // Four a second: a burst of three (a second's worth less the slack), then one every 250 ms.
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    } finally {
      await adminJson(env, 'org', 'limits', '--org', tenant.organizationId, '--rate', '0');
    }
  }, 30_000);

  it('refuses limits out of bounds and unknown Organizations with their exit codes, and explains itself', async () => {
    const negative = await admin(env, 'org', 'limits', '--org', tenant.organizationId, '--rate', '-1');
    expect(negative.code).toBe(1);
    expect(negative.stderr).toContain('--rate must be a number from 0.1 to 100000, or 0 to remove it');
    const fraction = await admin(env, 'org', 'limits', '--org', tenant.organizationId, '--daily', '2.5');
    expect(fraction.code).toBe(1);
    const noWeight = await admin(env, 'org', 'limits', '--org', tenant.organizationId, '--weight', '0');
    expect(noWeight.code).toBe(1);
    const unknown = await admin(env, 'org', 'show', '--org', '00000000-0000-4000-8000-000000000000');
    expect(unknown.code).toBe(3);
    const human = await admin(env, 'org', 'limits', '--org', tenant.organizationId, '--weight', '3');
    expect(human.stdout).toContain('weight 3');
    const help = await admin(env, 'org', 'limits', '--help');
    expect(help.stdout).toContain('--daily <N>');
  });
});
