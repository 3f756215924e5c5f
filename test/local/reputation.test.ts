/**
 * Issue 21's scenarios through the local stack (CONTRACT section 11 item 3), over real HTTP with
 * the mailbox simulator and REPUTATION_MIN_SENDS=20: an Organization mailing bounces is paused
 * within 5 s of the events and gets 403 `organization-paused` with nothing sent, its webhook
 * hears `organization.paused`, its status requests still work, another Organization sends on
 * meanwhile, and `org resume` lets it send again; 25 complaints pause an Organization too.
 */
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestStack, Tenant } from './helpers';
import { admin, adminEnv, adminJson, expectProblem, messageBody, provisionTenant, send, sentEmails, startTestStack } from './helpers';

const SIM = (box: string) => `${box}@simulator.amazonses.com`;

let stack: TestStack;
let env: Record<string, string>;
let hooks: Server;
let hookUrl: string;
const received: Record<string, any>[] = [];

beforeAll(async () => {
  stack = await startTestStack({ webhookRetryScale: 0.001, serviceEnv: { REPUTATION_MIN_SENDS: '20' } });
  env = adminEnv(stack);
  hooks = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      received.push(JSON.parse(body) as Record<string, any>);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hooks`;
});
afterAll(async () => {
  await stack?.stop();
  await new Promise((resolve) => hooks?.close(resolve));
});

/** One request of one message per address, each with its own subject. */
async function sendEach(who: Tenant, addresses: readonly string[], subject: string): Promise<Response> {
  const body = messageBody(who.organizationId);
  body.Messages = addresses.map((address, i) => ({ ...body.Messages[0]!, To: [address], Subject: `${subject} ${i}` }));
  return send(stack, who.apiKey, body);
}

/** `org show --json` until `done` holds, or fails after `ms`; answers how long it took. */
async function showWhen(who: Tenant, done: (shown: Record<string, any>) => boolean, ms: number): Promise<{ shown: Record<string, any>; after: number }> {
  const started = Date.now();
  for (;;) {
    const shown = await adminJson(env, 'org', 'show', '--org', who.organizationId);
    if (done(shown)) return { shown, after: Date.now() - started };
    if (Date.now() - started > ms) throw new Error(`org show after ${ms} ms: ${JSON.stringify(shown)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('an Organization that mails bounces', () => {
  let bad: Tenant;
  let good: Tenant;
  beforeAll(async () => {
    [bad, good] = [await provisionTenant(env), await provisionTenant(env)];
    await adminJson(env, 'webhook', 'set', '--org', bad.organizationId, '--url', hookUrl);
  });

  it('is paused within 5 s of its 30 bounces in 40 sends, while another Organization sends on', async () => {
    const addresses = [...Array.from({ length: 30 }, (_, i) => SIM(`bounce+${i}`)), ...Array.from({ length: 10 }, () => SIM('success'))];
    const sent = await sendEach(bad, addresses, 'Stale list');
    expect(sent.status).toBe(200);
    const goodAnswer = await sendEach(good, [SIM('success')], 'Meanwhile');
    expect(goodAnswer.status).toBe(200);

    const { shown, after } = await showWhen(bad, (s) => s.paused === true, 5_000);
    expect(after).toBeLessThan(5_000);
    expect(shown).toMatchObject({
      id: bad.organizationId,
      paused: true,
      pausedAt: expect.any(String),
      pausedReason: expect.stringMatching(/^hard-bounce rate [\d.]+ % \(\d+ of \d+ recipients in the last 7 days\) is at or above 5 %$/),
      reputation: { windowDays: 7, sends: expect.any(Number), hardBounces: expect.any(Number), complaints: 0 },
    });
    expect(shown.reputation.sends).toBeGreaterThanOrEqual(20);
    expect((await adminJson(env, 'org', 'show', '--org', good.organizationId)).paused).toBe(false);
  });

  it('gets 403 organization-paused saying why and since when, with nothing sent; its status requests still work', async () => {
    const before = (await sentEmails(stack.sesUrl)).length;
    const problem = await expectProblem(await sendEach(bad, ['alice@example.org'], 'While paused'), 403);
    expect(problem.type).toMatch(/\/organization-paused$/);
    expect(problem.detail).toMatch(/since \d{4}-\d\d-\d\dT[\d:.]+Z: hard-bounce rate/);
    expect((await sentEmails(stack.sesUrl)).length).toBe(before);

    const status = await fetch(stack.statusUrl, {
      method: 'POST',
      headers: { authorization: `Bearer ${bad.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ OrganizationId: bad.organizationId, MessageIds: ['no-such-message'] }),
    });
    expect(status.status).toBe(200);
    expect((await sendEach(good, ['bob@example.org'], 'Still fine')).status).toBe(200);
  });

  it('tells its webhook once, with organization.paused', async () => {
    const until = Date.now() + 3_000;
    while (!received.some((event) => event.type === 'organization.paused') && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
    const paused = received.filter((event) => event.type === 'organization.paused');
    expect(paused).toHaveLength(1);
    expect(paused[0]!.data).toEqual({ OrganizationId: bad.organizationId, PausedAt: expect.any(String), Reason: expect.stringMatching(/^hard-bounce rate/) });
  });

  it('sends again after org resume, and org show says so', async () => {
    // The operator resumes once the stale list's events are all in (a later bounce of the old
    // mail would count in the fresh window, and rightly pause it again). The 10 to
    // success@simulator are not counted as sends (simulator mail never dilutes the rates).
    await showWhen(bad, (s) => s.reputation.sends === 30 && s.reputation.hardBounces === 30, 10_000);
    const resumed = await admin(env, 'org', 'resume', '--org', bad.organizationId);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toMatch(new RegExp(`^Organization ${bad.organizationId} may send again \\(it was paused since .+: hard-bounce rate .+\\); its reputation starts a fresh 7-day window\\n$`));
    expect((await sendEach(bad, [SIM('success')], 'Back')).status).toBe(200);
    const shown = await adminJson(env, 'org', 'show', '--org', bad.organizationId);
    expect(shown).toMatchObject({ paused: false, pausedAt: null, pausedReason: null });
    expect(await adminJson(env, 'org', 'resume', '--org', bad.organizationId)).toEqual({ organizationId: bad.organizationId, paused: false, wasPaused: false });
  });
});

describe('an Organization whose mail is complained about', () => {
  it('is paused after 25 complaints', async () => {
    const complained = await provisionTenant(env);
    expect((await sendEach(complained, Array.from({ length: 25 }, (_, i) => SIM(`complaint+${i}`)), 'Newsletter')).status).toBe(200);
    const { shown } = await showWhen(complained, (s) => s.paused === true, 15_000);
    expect(shown.pausedReason).toMatch(/^complaint rate [\d.]+ % \(\d+ of \d+ recipients in the last 7 days\) is at or above 0.1 %$/);
    const human = await admin(env, 'org', 'show', '--org', complained.organizationId);
    expect(human.stdout).toContain(`PAUSED since ${shown.pausedAt}: ${shown.pausedReason}`);
    expect(human.stdout).toContain(`org resume --org ${complained.organizationId}`);
  });
});
