/**
 * Test mode (docs/keys.md) through the local stack: a `--test` key is authorised as a live one,
 * nothing it sends reaches the SES emulator, each message follows the mailbox simulator's rules
 * by recipient through the same events code into status, and nothing of it touches the live
 * suppression list, reputation or daily quota.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { TestStack, Tenant } from './helpers';
import { checkedFetch } from '../support/openapi';
import { adminEnv, adminJson, clearEmails, expectProblem, cancelAndHear, hookedTenant, inAbout, messageBody, provisionTenant, send, sentEmails, startTestStack } from './helpers';

const SIM = (box: string) => `${box}@simulator.amazonses.com`;

let stack: TestStack;
let env: Record<string, string>;
let tenant: Tenant;
let testKey: string;

beforeAll(async () => {
  stack = await startTestStack();
  env = adminEnv(stack);
  tenant = await provisionTenant(env);
  testKey = (await adminJson(env, 'key', 'rotate', '--user', tenant.userId, '--test')).key as string;
});
afterAll(async () => stack?.stop());
beforeEach(async () => clearEmails(stack.sesUrl));

const status = async (apiKey: string, body: Record<string, unknown>) =>
  fetch(stack.statusUrl, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ OrganizationId: tenant.organizationId, ...body }) });

/** Polls the status endpoint until every message is past `Sent`, or fails after two seconds. */
async function settled(ids: { MessageIds?: string[]; ScheduleIds?: string[] }): Promise<Record<string, any>[]> {
  const until = Date.now() + 2_000;
  for (;;) {
    const answer = await status(testKey, ids);
    expect(answer.status).toBe(200);
    const { Messages } = (await answer.json()) as { Messages: Record<string, any>[] };
    if (Messages.every((message) => !['Sent', 'Scheduled', 'Unknown'].includes(message.Status))) return Messages;
    if (Date.now() > until) throw new Error(`not settled within two seconds: ${JSON.stringify(Messages)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('a test-mode key', () => {
  it('starts tme_test_ and shows as a test key', async () => {
    expect(testKey).toMatch(/^tme_test_[0-9A-Za-z]{49}$/);
    expect(await adminJson(env, 'key', 'show', '--user', tenant.userId)).toMatchObject({ masked: `tme_test_…${testKey.slice(-4)}`, test: true });
  });

  it('is authorised as a live key: a From outside the Organization is 403, invalid input 400', async () => {
    await expectProblem(await send(stack, testKey, messageBody(tenant.organizationId, { From: 'ceo@elsewhere.example' })), 403);
    await expectProblem(await send(stack, testKey, messageBody(tenant.organizationId, { To: ['not an address'] })), 400);
    await expectProblem(await send(stack, testKey, messageBody('0b6f9a52-3f0e-4a8e-9d1b-5c7e2a4d8f10')), 403);
  });

  it('sends nothing to SES, answers test- message ids, and the simulator\'s events reach the status with "Test": true', async () => {
    const answer = await send(stack, testKey, {
      OrganizationId: tenant.organizationId,
      Messages: [
        messageBody(tenant.organizationId, { To: [SIM('bounce')] }).Messages[0],
        messageBody(tenant.organizationId, { To: ['alice@example.org'] }).Messages[0],
        messageBody(tenant.organizationId, { To: [SIM('complaint')] }).Messages[0],
      ],
    });
    expect(answer.status).toBe(200);
    const { Messages } = (await answer.json()) as { Messages: { Status: string; MessageId: string }[] };
    expect(Messages.map((message) => message.Status)).toEqual(['Sent', 'Sent', 'Sent']);
    for (const message of Messages) expect(message.MessageId).toMatch(/^test-[0-9a-f-]{36}$/);
    const states = await settled({ MessageIds: Messages.map((message) => message.MessageId) });
    expect(states.map((state) => [state.Status, state.Test])).toEqual([
      ['Bounced', true],
      ['Delivered', true],
      ['Complained', true],
    ]);
    expect(await sentEmails(stack.sesUrl)).toEqual([]);
  });

  it('leaves the live suppression list, reputation and daily quota untouched', async () => {
    await adminJson(env, 'org', 'limits', '--org', tenant.organizationId, '--daily', '1');
    const bounced = await send(stack, testKey, messageBody(tenant.organizationId, { To: [SIM('bounce')] }));
    const second = await send(stack, testKey, messageBody(tenant.organizationId, { To: [SIM('bounce')] }));
    expect([bounced.status, second.status]).toEqual([200, 200]);
    // Its answers still say where the quota stands (CONTRACT 11.2: every send answer, while there is one): untouched.
    expect([second.headers.get('ratelimit-policy'), second.headers.get('ratelimit')]).toEqual(['"daily";q=1;w=86400', expect.stringMatching(/^"daily";r=1;t=\d+$/)]);
    const { MessageId } = ((await bounced.json()) as { Messages: { MessageId: string }[] }).Messages[0]!;
    expect((await settled({ MessageIds: [MessageId] }))[0]!.Status).toBe('Bounced');

    expect(await adminJson(env, 'suppression', 'list', '--org', tenant.organizationId)).toEqual({ addresses: [] });
    const shown = await adminJson(env, 'org', 'show', '--org', tenant.organizationId);
    expect(shown.usage.used).toBe(0);
    expect(shown.reputation).toMatchObject({ sends: 0, hardBounces: 0, complaints: 0 });
    expect(await sentEmails(stack.sesUrl)).toEqual([]);

    // The live key still reaches that address (it is not suppressed), and is held to the quota.
    const live = (await adminJson(env, 'key', 'rotate', '--user', tenant.userId)).key as string;
    expect((await send(stack, live, messageBody(tenant.organizationId, { To: [SIM('bounce')] }))).status).toBe(200);
    expect(await sentEmails(stack.sesUrl)).toHaveLength(1);
    testKey = (await adminJson(env, 'key', 'rotate', '--user', tenant.userId, '--test')).key as string;
    await adminJson(env, 'org', 'limits', '--org', tenant.organizationId, '--daily', '0');
  });

  it('sends a scheduled message through test mode too when its time comes', async () => {
    // Three seconds ahead: the send and the status call below must both answer while it waits.
    const when = inAbout(3_000);
    const answer = await send(stack, testKey, messageBody(tenant.organizationId, { To: [SIM('success')], SendAt: when.text }));
    expect(answer.status).toBe(200);
    const { Status, ScheduleId } = ((await answer.json()) as { Messages: { Status: string; ScheduleId: string }[] }).Messages[0]!;
    expect(Status).toBe('Scheduled');
    // Told as a test message while it waits, as every answer about a test message is.
    const waiting = (await (await status(testKey, { ScheduleIds: [ScheduleId] })).json()) as { Messages: Record<string, unknown>[] };
    expect(waiting.Messages[0]).toMatchObject({ ScheduleId, Status: 'Scheduled', Test: true });
    await new Promise((resolve) => setTimeout(resolve, when.at - Date.now() + 1_000));
    const [state] = await settled({ ScheduleIds: [ScheduleId] });
    expect(state).toMatchObject({ ScheduleId, Status: 'Delivered', MessageId: expect.stringMatching(/^test-/), Test: true });
    expect(await sentEmails(stack.sesUrl)).toEqual([]);
  });

  it('says "Test": true of a scheduled message in the settings page\'s list, schedule list and its schedule webhooks too', async () => {
    const hooked = await hookedTenant(stack, env, 'TestSchedules');
    try {
      const key = (await adminJson(env, 'key', 'rotate', '--user', hooked.tenant.userId, '--test')).key as string;
      const answer = await send(stack, key, messageBody(hooked.tenant.organizationId, { SendAt: inAbout(600_000).text }));
      const { ScheduleId } = ((await answer.json()) as { Messages: { ScheduleId: string }[] }).Messages[0]!;
      const listed = await checkedFetch(`${stack.apiUrl}/v1.2/me/schedules`, { headers: { authorization: `Bearer ${hooked.token}` } });
      expect(((await listed.json()) as { Schedules: Record<string, unknown>[] }).Schedules).toEqual([expect.objectContaining({ ScheduleId, Test: true })]);
      expect((await adminJson(env, 'schedule', 'list', '--org', hooked.tenant.organizationId)).schedules).toEqual([expect.objectContaining({ scheduleId: ScheduleId, test: true })]);
      const told = await cancelAndHear(stack, hooked, key, ScheduleId);
      expect(told.map((e) => [e.type, e.data.Test])).toEqual([
        ['email.scheduled', true],
        ['email.cancelled', true],
      ]);
    } finally {
      hooked.close();
    }
  });
});
