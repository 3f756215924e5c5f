/**
 * Scheduled send through the local stack (CONTRACT section 13), over real HTTP: a message with a
 * `SendAt` ahead is `Scheduled` and fires on time (within two seconds) through the same send
 * pipeline, reaching the SES emulator and the status endpoint; cancel, status and webhooks
 * (verified with `standardwebhooks`); a membership or sender removed before the time stops it;
 * and a schedule made before a restart with data on disk still fires after it. Every response is
 * checked against openapi.json.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import type { TestStack, Tenant } from './helpers';
import { adminEnv, adminJson, clientOf, expectProblem, inAbout, messageBody, provisionTenant, send, sentEmails, startTestStack, webhookReceiver } from './helpers';

let stack: TestStack;
let env: Record<string, string>;
let tenant: Tenant;
let other: Tenant;

beforeAll(async () => {
  stack = await startTestStack({ webhookRetryScale: 0.001 });
  env = adminEnv(stack);
  [tenant, other] = [await provisionTenant(env), await provisionTenant(env)];
  // Warm the send, status and cancel paths up once: a cold first call can take seconds on a busy
  // machine, longer than the few seconds ahead the tests below schedule their messages.
  await warmUp(stack, tenant);
});
afterAll(async () => stack?.stop());

function post(url: string, apiKey: string, body: unknown): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

async function statusOf(who: Tenant, scheduleId: string): Promise<Record<string, any>> {
  const response = await post(stack.statusUrl, who.apiKey, { OrganizationId: who.organizationId, ScheduleIds: [scheduleId] });
  expect(response.status).toBe(200);
  return ((await response.json()) as { Messages: Record<string, any>[] }).Messages[0]!;
}

async function until<T>(check: () => Promise<T | undefined> | T | undefined, ms = 4_000, what = 'condition'): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function schedule(who: Tenant, overrides: Record<string, unknown>): Promise<string> {
  const response = await send(stack, who.apiKey, messageBody(who.organizationId, overrides));
  const body = (await response.json()) as any;
  expect(response.status).toBe(200);
  expect(body.Messages[0]).toEqual({ Index: 0, Status: 'Scheduled', ScheduleId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
  return body.Messages[0].ScheduleId as string;
}

async function warmUp(on: TestStack, who: Tenant): Promise<void> {
  expect((await send(on, who.apiKey, messageBody(who.organizationId, { Subject: 'warm-up' }))).status).toBe(200);
  for (const url of [on.statusUrl, on.cancelUrl]) {
    expect((await post(url, who.apiKey, { OrganizationId: who.organizationId, ScheduleIds: ['warm-up'] })).status).toBe(200);
  }
}

const subjectOf = (tag: string) => `Scheduled ${tag} ${Math.random().toString(36).slice(2)}`;
const emailsWith = async (subject: string) => (await sentEmails(stack.sesUrl)).filter((email) => email.subject === subject);

describe('SendAt', () => {
  it('schedules a message and sends it on time, through the same pipeline, with its status and MessageId', async () => {
    const subject = subjectOf('on time');
    const when = inAbout(3_000);
    const scheduleId = await schedule(tenant, { SendAt: when.text, Subject: subject, To: ['success@simulator.amazonses.com'] });
    expect(await emailsWith(subject)).toHaveLength(0);
    expect(await statusOf(tenant, scheduleId)).toEqual({ ScheduleId: scheduleId, SendAt: when.text, Status: 'Scheduled', Recipients: [], Tags: {} });

    const [email] = await until(async () => ((await emailsWith(subject)).length > 0 ? emailsWith(subject) : undefined), when.at - Date.now() + 2_000, 'the scheduled message');
    // Never early, and at most two seconds late (the emulator stores it as it is sent).
    expect(Date.now()).toBeGreaterThanOrEqual(when.at);
    const sent = await until(async () => {
      const status = await statusOf(tenant, scheduleId);
      return status.Status === 'Delivered' ? status : undefined;
    }, 3_000, 'the delivered state');
    expect(sent).toEqual({
      ScheduleId: scheduleId,
      SendAt: when.text,
      MessageId: email!.messageId,
      Status: 'Delivered',
      Recipients: [{ Address: 'success@simulator.amazonses.com', Status: 'Delivered', At: expect.any(String), Detail: null, Opens: 0, FirstOpenedAt: null, Clicks: [] }],
      Tags: {},
      Opens: 0,
      FirstOpenedAt: null,
      Clicks: [],
    });
    // A ScheduleId among the MessageIds is answered too, and an SES message id as before.
    const both = await post(stack.statusUrl, tenant.apiKey, { OrganizationId: tenant.organizationId, MessageIds: [scheduleId, email!.messageId] });
    const answers = ((await both.json()) as any).Messages;
    expect(answers[0]).toMatchObject({ ScheduleId: scheduleId, Status: 'Delivered' });
    expect(answers[1]).toMatchObject({ MessageId: email!.messageId, Status: 'Delivered' });
  });

  it('mixes a scheduled message, one sent now and one whose SendAt has passed in one 200 answer', async () => {
    const base = messageBody(tenant.organizationId).Messages[0]!;
    const { data, response } = await clientOf(stack, tenant.apiKey).POST('/v1.2/email/send', {
      body: { OrganizationId: tenant.organizationId, Messages: [{ ...base, SendAt: inAbout(60_000).text }, base, { ...base, SendAt: '2020-01-01 00:00:00' }] },
    });
    expect(response.status).toBe(200);
    expect(data!.Messages.map((m) => m.Status)).toEqual(['Scheduled', 'Sent', 'Sent']);
  });

  it('refuses a SendAt too far ahead, not before its ExpirationDateTime, or malformed, naming each (400, nothing scheduled)', async () => {
    const far = new Date(Date.now() + 31 * 24 * 60 * 60 * 1_000).toISOString().slice(0, 19).replace('T', ' ');
    const soon = inAbout(60_000).text;
    const body = messageBody(tenant.organizationId);
    const base = body.Messages[0]!;
    const problem = await expectProblem(
      await send(stack, tenant.apiKey, {
        ...body,
        Messages: [{ ...base, SendAt: far }, { ...base, SendAt: soon, ExpirationDateTime: soon }, { ...base, SendAt: '2026-02-30 10:00:00' }, { ...base, SendAt: 1_700_000_000 }],
      }),
      400,
    );
    expect(problem.errors).toEqual([
      { pointer: '/Messages/0/SendAt', detail: expect.stringContaining('30 days') },
      { pointer: '/Messages/1/SendAt', detail: expect.stringContaining('ExpirationDateTime') },
      { pointer: '/Messages/2/SendAt', detail: expect.stringContaining('YYYY-MM-DD HH:MM:SS') },
      { pointer: '/Messages/3/SendAt', detail: expect.stringContaining('YYYY-MM-DD HH:MM:SS') },
    ]);
  });

  it('checks the sender and membership at once: a From outside the Organization is a 403 and nothing is scheduled', async () => {
    const problem = await expectProblem(await send(stack, tenant.apiKey, messageBody(tenant.organizationId, { From: 'x@elsewhere.example', SendAt: inAbout(60_000).text })), 403);
    expect(problem.errors).toEqual([{ pointer: '/Messages/0/From', detail: expect.any(String) }]);
    await expectProblem(await send(stack, tenant.apiKey, messageBody(other.organizationId, { SendAt: inAbout(60_000).text })), 403);
  });
});

describe('POST /v1.2/email/cancel', () => {
  it('cancels a waiting message, which then never goes; a repeat says Cancelled, another Organization gets Unknown', async () => {
    const subject = subjectOf('cancelled');
    const when = inAbout(3_000);
    const scheduleId = await schedule(tenant, { SendAt: when.text, Subject: subject });
    const theirs = await post(stack.cancelUrl, other.apiKey, { OrganizationId: other.organizationId, ScheduleIds: [scheduleId] });
    expect(await theirs.json()).toEqual({ Messages: [{ ScheduleId: scheduleId, Status: 'Unknown' }] });

    const { data, response } = await clientOf(stack, tenant.apiKey).POST('/v1.2/email/cancel', {
      body: { OrganizationId: tenant.organizationId, ScheduleIds: [scheduleId, '00000000-0000-4000-8000-000000000000', scheduleId] },
    });
    expect(response.status).toBe(200);
    expect(data).toEqual({
      Messages: [
        { ScheduleId: scheduleId, Status: 'Cancelled' },
        { ScheduleId: '00000000-0000-4000-8000-000000000000', Status: 'Unknown' },
        { ScheduleId: scheduleId, Status: 'Cancelled' },
      ],
    });
    await new Promise((resolve) => setTimeout(resolve, when.at - Date.now() + 1_500));
    expect(await emailsWith(subject)).toHaveLength(0);
    expect(await statusOf(tenant, scheduleId)).toEqual({ ScheduleId: scheduleId, SendAt: when.text, Status: 'Cancelled', Recipients: [], Tags: {} });
    // Another Organization learns nothing from the status endpoint either.
    expect(await statusOf(other, scheduleId)).toEqual({ ScheduleId: scheduleId, Status: 'Unknown', Recipients: [], Tags: {} });
  });

  it('answers AlreadySent once the message has gone', async () => {
    const subject = subjectOf('sent');
    const when = inAbout(1_000);
    const scheduleId = await schedule(tenant, { SendAt: when.text, Subject: subject });
    await until(async () => ((await emailsWith(subject)).length > 0 ? true : undefined), when.at - Date.now() + 2_000, 'the send');
    await until(async () => ((await statusOf(tenant, scheduleId)).MessageId ? true : undefined), 2_000, 'the recorded send');
    const response = await post(stack.cancelUrl, tenant.apiKey, { organizationId: tenant.organizationId, ScheduleIds: [scheduleId] });
    expect(await response.json()).toEqual({ Messages: [{ ScheduleId: scheduleId, Status: 'AlreadySent' }] });
  });

  it('has the send endpoint\'s rules: 401 without a key, 403 outside the Organization, 400 listing every problem, 405', async () => {
    await expectProblem(await fetch(stack.cancelUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }), 401);
    await expectProblem(await post(stack.cancelUrl, tenant.apiKey, { OrganizationId: other.organizationId, ScheduleIds: ['x'] }), 403);
    const invalid = await expectProblem(await post(stack.cancelUrl, tenant.apiKey, { OrganizationId: 'nope', ScheduleIds: ['ok', 'has space', 7], Extra: 1 }), 400);
    expect(invalid.errors.map((e: any) => e.pointer).sort()).toEqual(['/Extra', '/OrganizationId', '/ScheduleIds/1', '/ScheduleIds/2']);
    await expectProblem(await post(stack.cancelUrl, tenant.apiKey, { OrganizationId: tenant.organizationId, ScheduleIds: Array.from({ length: 101 }, (_, i) => `s${i}`) }), 400);
    await expectProblem(await fetch(stack.cancelUrl, { method: 'GET' }), 405);
  });
});

describe('at its time, the message is sent as a fresh send would be', () => {
  it('is not sent when its user left the Organization, nor when its sender was removed: Failed, told to the webhook', async () => {
    const victim = await provisionTenant(env, ['example.com', 'billing@example.net']);
    const [first, second] = [subjectOf('left'), subjectOf('sender')];
    const when = inAbout(3_000);
    const memberGone = await schedule(victim, { SendAt: when.text, Subject: first });
    const senderGone = await schedule(victim, { SendAt: when.text, Subject: second, From: 'billing@example.net' });
    await adminJson(env, 'sender', 'remove', '--org', victim.organizationId, '--address', 'billing@example.net');
    const failed = await until(async () => {
      const status = await statusOf(victim, senderGone);
      return status.Status === 'Failed' ? status : undefined;
    }, when.at - Date.now() + 2_000, 'the sender refusal');
    expect(failed).toEqual({ ScheduleId: senderGone, SendAt: when.text, Status: 'Failed', Recipients: [], Tags: {}, Error: { Code: 'SenderForbidden', Message: expect.any(String), Retryable: false } });
    expect((await statusOf(victim, memberGone)).Status).toMatch(/^(Sent|Delivered)$/);

    const later = inAbout(3_000);
    const afterLeaving = await schedule(victim, { SendAt: later.text, Subject: first });
    await adminJson(env, 'member', 'remove', '--org', victim.organizationId, '--user', victim.userId);
    await new Promise((resolve) => setTimeout(resolve, later.at - Date.now() + 1_500));
    // The caller is no member now: its own status requests are refused, so read as another member.
    const { id: readerId } = await adminJson(env, 'user', 'create', '--email', `${Math.random().toString(36).slice(2)}@users.example.net`);
    await adminJson(env, 'member', 'add', '--org', victim.organizationId, '--user', readerId);
    const { key } = await adminJson(env, 'key', 'generate', '--user', readerId);
    const reader = { ...victim, apiKey: key as string };
    expect(await statusOf(reader, afterLeaving)).toMatchObject({ Status: 'Failed', Error: { Code: 'OrganizationForbidden', Retryable: false } });
    expect((await emailsWith(first)).length).toBe(1);
    expect(await emailsWith(second)).toHaveLength(0);
  });
});

describe('suppression at its time', () => {
  it('names the recipients the suppression list left out, in the status and the email.failed webhook, sent or not', async () => {
    const hook = await webhookReceiver();
    const hooked = await provisionTenant(env);
    try {
      const { secret } = await adminJson(env, 'webhook', 'set', '--org', hooked.organizationId, '--url', hook.url);
      // A hard bounce puts the address on the Organization's suppression list.
      const gone = 'bounce+later@simulator.amazonses.com';
      expect((await send(stack, hooked.apiKey, messageBody(hooked.organizationId, { To: [gone] }))).status).toBe(200);
      await until(async () => {
        const listed = await adminJson(env, 'suppression', 'list', '--org', hooked.organizationId);
        return (listed.addresses as { address: string }[]).some((entry) => entry.address === gone) || undefined;
      }, 15_000, 'the bounce to suppress the address');

      const when = inAbout(3_000);
      const partly = await schedule(hooked, { SendAt: when.text, To: [gone, 'success@simulator.amazonses.com'] });
      const wholly = await schedule(hooked, { SendAt: when.text, To: [gone] });
      const failed = await until(async () => {
        const status = await statusOf(hooked, wholly);
        return status.Status === 'Failed' ? status : undefined;
      }, when.at - Date.now() + 4_000, 'the suppressed schedule');
      expect(failed).toEqual({ ScheduleId: wholly, SendAt: when.text, Status: 'Failed', Recipients: [], Tags: {}, Error: { Code: 'Suppressed', Message: expect.any(String), Retryable: false }, Suppressed: [gone] });
      const sent = await until(async () => {
        const status = await statusOf(hooked, partly);
        return status.MessageId ? status : undefined;
      }, 4_000, 'the partly suppressed schedule');
      expect(sent).toMatchObject({ ScheduleId: partly, Status: expect.stringMatching(/^(Sent|Delivered)$/), Suppressed: [gone] });

      const verifier = new Webhook(secret as string);
      const told = await until(() => hook.received.map((r) => verifier.verify(r.body, r.headers) as any).find((e) => e.type === 'email.failed'), 3_000, 'email.failed');
      expect(told.data).toEqual({ OrganizationId: hooked.organizationId, ScheduleId: wholly, Status: 'Failed', SendAt: when.text, Error: { Code: 'Suppressed', Message: expect.any(String), Retryable: false }, Suppressed: [gone], Tags: {} });
    } finally {
      hook.close();
    }
  });
});

describe('webhooks', () => {
  it('tell email.scheduled, email.cancelled, email.failed, and once sent the usual events, signed per Standard Webhooks', async () => {
    const hook = await webhookReceiver();
    const { received } = hook;
    const hooked = await provisionTenant(env, ['example.com', 'ops@example.net']);
    try {
      const { secret } = await adminJson(env, 'webhook', 'set', '--org', hooked.organizationId, '--url', hook.url);
      const when = inAbout(60_000);
      const cancelled = await schedule(hooked, { SendAt: when.text, Tags: { ref: 'c-1' } });
      await post(stack.cancelUrl, hooked.apiKey, { OrganizationId: hooked.organizationId, ScheduleIds: [cancelled] });
      const soon = inAbout(3_000);
      const refused = await schedule(hooked, { SendAt: soon.text, From: 'ops@example.net' });
      const sent = await schedule(hooked, { SendAt: soon.text, To: ['success@simulator.amazonses.com'] });
      await adminJson(env, 'sender', 'remove', '--org', hooked.organizationId, '--address', 'ops@example.net');

      const verifier = new Webhook(secret as string);
      const events = () => received.map((r) => verifier.verify(r.body, r.headers) as any);
      await until(() => (events().some((e) => e.type === 'email.failed') ? true : undefined), soon.at - Date.now() + 3_000, 'email.failed');
      const byType = (type: string) => events().filter((e) => e.type === type).map((e) => e.data);
      expect(byType('email.scheduled')).toEqual(
        expect.arrayContaining([
          { OrganizationId: hooked.organizationId, ScheduleId: cancelled, Status: 'Scheduled', SendAt: when.text, Tags: { ref: 'c-1' } },
          { OrganizationId: hooked.organizationId, ScheduleId: refused, Status: 'Scheduled', SendAt: soon.text, Tags: {} },
        ]),
      );
      expect(byType('email.cancelled')).toEqual([{ OrganizationId: hooked.organizationId, ScheduleId: cancelled, Status: 'Cancelled', SendAt: when.text, Tags: { ref: 'c-1' } }]);
      // The status answer tells the schedule's tags too.
      expect(await statusOf(hooked, cancelled)).toMatchObject({ Status: 'Cancelled', Tags: { ref: 'c-1' } });
      expect(byType('email.failed')).toEqual([
        { OrganizationId: hooked.organizationId, ScheduleId: refused, Status: 'Failed', SendAt: soon.text, Error: { Code: 'SenderForbidden', Message: expect.any(String), Retryable: false }, Tags: {} },
      ]);
      expect(received.find((r) => JSON.parse(r.body).type === 'email.cancelled')!.headers['webhook-id']).toBe(`sch_${cancelled}_cancelled`);
      // The one that went: SES's own events follow, with the MessageId the status endpoint names.
      const { MessageId } = await until(async () => {
        const status = await statusOf(hooked, sent);
        return status.MessageId ? status : undefined;
      }, 3_000, 'the scheduled send');
      await until(() => (byType('email.delivered').some((data) => data.MessageId === MessageId) ? true : undefined), 3_000, 'email.delivered');
      // Its delivery events name the schedule it was sent for.
      expect(byType('email.sent').find((data) => data.MessageId === MessageId)).toMatchObject({ ScheduleId: sent });
      expect(byType('email.delivered').find((data) => data.MessageId === MessageId)).toMatchObject({ ScheduleId: sent });
    } finally {
      hook.close();
    }
  });
});

describe('durability', () => {
  it('a schedule made before a restart, with data on disk, still fires after it, also when its time passed meanwhile', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'scheduled-send-'));
    const options = { data: 'disk' as const, dataDir };
    let first: TestStack | undefined = await startTestStack(options);
    let second: TestStack | undefined;
    try {
      const owner = await provisionTenant(adminEnv(first));
      await warmUp(first, owner);
      const [soon, passed] = [subjectOf('after restart'), subjectOf('while down')];
      // Far enough apart that the second stack starts and fires the overdue one well before the other is due.
      const later = inAbout(10_000);
      const whileDown = inAbout(2_000);
      for (const [subject, when] of [[soon, later], [passed, whileDown]] as const) {
        const response = await send(first, owner.apiKey, messageBody(owner.organizationId, { SendAt: when.text, Subject: subject }));
        expect(((await response.json()) as any).Messages[0].Status).toBe('Scheduled');
      }
      await first.stop();
      first = undefined;
      await new Promise((resolve) => setTimeout(resolve, whileDown.at - Date.now() + 500));

      second = await startTestStack(options);
      const restarted = second;
      const inbox = async (subject: string) => (await sentEmails(restarted.sesUrl)).filter((email) => email.subject === subject);
      // The one whose time passed while the stack was down goes at once.
      await until(async () => ((await inbox(passed)).length > 0 ? true : undefined), 2_000, 'the overdue schedule');
      expect(await inbox(soon)).toHaveLength(0);
      await until(async () => ((await inbox(soon)).length > 0 ? true : undefined), later.at - Date.now() + 2_000, 'the schedule after the restart');
      expect(Date.now()).toBeGreaterThanOrEqual(later.at);
      expect(await inbox(passed)).toHaveLength(1);
    } finally {
      await first?.stop();
      await second?.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
