/**
 * A schedule dies with its key (security audit round 3, finding 4; docs/security-round-3.md), and
 * an Organization's pending schedules are bounded, through the local stack over real HTTP and the
 * admin command line, as a client and an operator see them: `key revoke` and `key rotate` cancel
 * what the old key scheduled (`--keep-schedules` keeps it, on the new key), nothing cancelled is
 * ever sent, `schedule list` / `schedule cancel` show and stop them, and past
 * `org limits --scheduled N` a message with `SendAt` is `Failed: QuotaExceeded`. The settings
 * page's API does the same for its user: Activity's waiting schedules with Cancel, and rotate
 * (unless `KeepSchedules`) and revoke cancelling the old key's.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestStack, Tenant } from './helpers';
import { admin, adminEnv, adminJson, inAbout, messageBody, provisionTenant, send, sentEmails, startTestStack } from './helpers';
import { signIn } from '../support/oidc';
import { LOCAL_CLIENT_ID } from '../../infra/local/oidc/provider';

let stack: TestStack;
let env: Record<string, string>;

beforeAll(async () => {
  stack = await startTestStack();
  env = adminEnv(stack);
});
afterAll(async () => stack?.stop());

const subjectOf = (tag: string) => `Keyed ${tag} ${Math.random().toString(36).slice(2)}`;
const emailsWith = async (subject: string) => (await sentEmails(stack.sesUrl)).filter((email) => email.subject === subject);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function schedule(who: Tenant, subject: string, at: string, apiKey = who.apiKey): Promise<Record<string, any>> {
  const response = await send(stack, apiKey, messageBody(who.organizationId, { SendAt: at, Subject: subject, To: ['success@simulator.amazonses.com'] }));
  return ((await response.json()) as { Messages: Record<string, any>[] }).Messages[0]!;
}

async function statusOf(who: Tenant, scheduleId: string, apiKey = who.apiKey): Promise<string> {
  const response = await fetch(stack.statusUrl, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ OrganizationId: who.organizationId, ScheduleIds: [scheduleId] }),
  });
  return ((await response.json()) as { Messages: { Status: string }[] }).Messages[0]!.Status;
}

/** A second member of the tenant's Organization, with a key of its own, to read statuses with. */
async function observer(who: Tenant): Promise<string> {
  const { id } = await adminJson(env, 'user', 'create', '--email', `${Math.random().toString(36).slice(2)}@users.example.net`);
  await adminJson(env, 'member', 'add', '--org', who.organizationId, '--user', id);
  return (await adminJson(env, 'key', 'generate', '--user', id)).key as string;
}

describe('a schedule dies with its key', () => {
  it('key revoke cancels what the key scheduled: Cancelled at once, never sent, gone from schedule list', async () => {
    const tenant = await provisionTenant(env);
    const reader = await observer(tenant);
    const subject = subjectOf('revoked');
    const when = inAbout(10_000);
    const { ScheduleId } = await schedule(tenant, subject, when.text);
    expect((await adminJson(env, 'schedule', 'list', '--org', tenant.organizationId)).schedules).toEqual([
      { scheduleId: ScheduleId, sendAt: when.text, recipients: ['success@simulator.amazonses.com'], subject, userId: tenant.userId },
    ]);

    expect(await adminJson(env, 'key', 'revoke', '--user', tenant.userId)).toEqual({ userId: tenant.userId, revoked: true, cancelledSchedules: 1, noticeAt: 'send time' });
    expect(await statusOf(tenant, ScheduleId, reader)).toBe('Cancelled');
    expect((await adminJson(env, 'schedule', 'list', '--org', tenant.organizationId)).schedules).toEqual([]);
    await sleep(when.at - Date.now() + 2_000);
    expect(await emailsWith(subject)).toHaveLength(0);
    expect(await statusOf(tenant, ScheduleId, reader)).toBe('Cancelled');
  });

  it('key rotate cancels them too; with --keep-schedules they stay, on the new key, and are sent', async () => {
    const tenant = await provisionTenant(env);
    const reader = await observer(tenant);
    const [dropped, kept] = [subjectOf('rotated'), subjectOf('kept')];
    const when = inAbout(10_000);
    const first = await schedule(tenant, dropped, when.text);
    const { key: second } = await adminJson(env, 'key', 'rotate', '--user', tenant.userId);
    expect(await statusOf(tenant, first.ScheduleId, reader)).toBe('Cancelled');

    const next = await schedule(tenant, kept, when.text, second);
    await adminJson(env, 'key', 'rotate', '--user', tenant.userId, '--keep-schedules');
    expect(await statusOf(tenant, next.ScheduleId, reader)).toBe('Scheduled');
    await sleep(when.at - Date.now() + 2_500);
    expect(await emailsWith(dropped)).toHaveLength(0);
    expect(await emailsWith(kept)).toHaveLength(1);
  });

  it('schedule cancel stops one (and refuses another Organization\'s), without touching the rest', async () => {
    const tenant = await provisionTenant(env);
    const stranger = await provisionTenant(env);
    const [stopped, left] = [subjectOf('stopped'), subjectOf('left')];
    const when = inAbout(10_000);
    const a = await schedule(tenant, stopped, when.text);
    const b = await schedule(tenant, left, when.text);
    const refused = await admin(env, 'schedule', 'cancel', '--org', stranger.organizationId, '--id', a.ScheduleId, '--json');
    expect(refused.code).toBe(3);
    // An id that is not a UUID is a usage error, as for every id option, not "no such schedule".
    const malformed = await admin(env, 'schedule', 'cancel', '--org', tenant.organizationId, '--id', 'not-a-uuid', '--json');
    expect([malformed.code, JSON.parse(malformed.stderr)]).toEqual([1, { error: { code: 'invalid_argument', message: '"not-a-uuid" is not a ScheduleId (a UUID)' } }]);
    expect(await adminJson(env, 'schedule', 'cancel', '--org', tenant.organizationId, '--id', a.ScheduleId)).toEqual({ organizationId: tenant.organizationId, scheduleId: a.ScheduleId, status: 'Cancelled', noticeAt: 'send time' });
    expect((await adminJson(env, 'schedule', 'list', '--org', tenant.organizationId)).schedules.map((s: { scheduleId: string }) => s.scheduleId)).toEqual([b.ScheduleId]);
    await sleep(when.at - Date.now() + 2_000);
    expect(await emailsWith(stopped)).toHaveLength(0);
    expect(await emailsWith(left)).toHaveLength(1);
  });
});

describe('pending schedules are bounded per Organization', () => {
  it('past org limits --scheduled N a SendAt message is Failed: QuotaExceeded (429); a cancel makes room; other Organizations are not affected', async () => {
    const tenant = await provisionTenant(env);
    const other = await provisionTenant(env);
    expect(await adminJson(env, 'org', 'limits', '--org', tenant.organizationId, '--scheduled', '2')).toMatchObject({ scheduled: 2 });
    const later = inAbout(60_000).text;
    const [a, b] = [await schedule(tenant, subjectOf('1'), later), await schedule(tenant, subjectOf('2'), later)];
    expect([a.Status, b.Status]).toEqual(['Scheduled', 'Scheduled']);

    const response = await send(stack, tenant.apiKey, messageBody(tenant.organizationId, { SendAt: later, Subject: subjectOf('3') }));
    expect(response.status).toBe(429);
    expect(((await response.json()) as { Messages: unknown[] }).Messages[0]).toMatchObject({
      Status: 'Failed',
      // The Organization's own limit, named; not SES's quota.
      Error: { Code: 'QuotaExceeded', Retryable: true, Message: expect.stringMatching(/limit of 2 scheduled messages not yet sent/) },
    });
    expect((await schedule(other, subjectOf('other'), later)).Status).toBe('Scheduled');

    await adminJson(env, 'schedule', 'cancel', '--org', tenant.organizationId, '--id', a.ScheduleId);
    expect((await schedule(tenant, subjectOf('4'), later)).Status).toBe('Scheduled');
    // The default is 10,000: 0 restores it.
    expect(await adminJson(env, 'org', 'limits', '--org', tenant.organizationId, '--scheduled', '0')).toMatchObject({ scheduled: 10_000 });
  });
});

describe("the settings page's API", () => {
  /** A user with an e-mail to sign in with, a member with a key of a new Organization. */
  async function signedInTenant(): Promise<{ tenant: Tenant; token: string; reader: string }> {
    const email = `${Math.random().toString(36).slice(2)}@users.example.net`;
    const { id: organizationId } = await adminJson(env, 'org', 'create', '--name', 'Page');
    const { id: userId } = await adminJson(env, 'user', 'create', '--email', email);
    await adminJson(env, 'member', 'add', '--org', organizationId, '--user', userId);
    await adminJson(env, 'sender', 'add', '--org', organizationId, '--domain', 'example.com');
    const { key: apiKey } = await adminJson(env, 'key', 'generate', '--user', userId);
    const tenant = { organizationId, userId, apiKey };
    const { accessToken } = await signIn({ issuer: stack.oidcIssuer, clientId: LOCAL_CLIENT_ID, redirectUri: stack.settingsUrl, email });
    return { tenant, token: accessToken, reader: await observer(tenant) };
  }

  const me = (token: string, method: string, path: string, body?: unknown) =>
    fetch(`${stack.apiUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });

  it('lists the waiting schedules for Activity and cancels one (Cancel), only in a member Organization', async () => {
    const { tenant, token, reader } = await signedInTenant();
    const stranger = await provisionTenant(env);
    const when = inAbout(10_000);
    const subject = subjectOf('page');
    const { ScheduleId } = await schedule(tenant, subject, when.text);
    const listed = await me(token, 'GET', '/v1.2/me/schedules');
    expect(listed.status).toBe(200);
    expect(await listed.json()).toEqual({ Schedules: [{ OrganizationId: tenant.organizationId, ScheduleId, SendAt: when.text, Recipients: ['success@simulator.amazonses.com'], Subject: subject }] });

    expect((await me(token, 'DELETE', `/v1.2/me/schedules?organizationId=${stranger.organizationId}&scheduleId=${ScheduleId}`)).status).toBe(403);
    const cancelled = await me(token, 'DELETE', `/v1.2/me/schedules?organizationId=${tenant.organizationId}&scheduleId=${ScheduleId}`);
    expect(await cancelled.json()).toEqual({ ScheduleId, Status: 'Cancelled' });
    expect(await statusOf(tenant, ScheduleId, reader)).toBe('Cancelled');
    expect(await (await me(token, 'GET', '/v1.2/me/schedules')).json()).toEqual({ Schedules: [] });
    await sleep(when.at - Date.now() + 2_000);
    expect(await emailsWith(subject)).toHaveLength(0);
  });

  it('answers a missing or malformed organizationId 400 naming it, and another Organization 403 in words for a signed-in user', async () => {
    const { token } = await signedInTenant();
    const stranger = await provisionTenant(env);
    const scheduleId = '0b0e2c0a-3d7e-4b9c-8f3a-2d5c6e7f8a9b';
    const cases: [string, string, number, string][] = [
      ['DELETE', `/v1.2/me/schedules?scheduleId=${scheduleId}`, 400, 'is required: the id of one of your Organizations'],
      ['DELETE', '/v1.2/me/suppressions?address=ada@example.org&organizationId=', 400, 'is required: the id of one of your Organizations'],
      ['DELETE', `/v1.2/me/schedules?organizationId=acme&scheduleId=${scheduleId}`, 400, 'must be an Organization id (a UUID)'],
      ['GET', '/v1.2/me/templates?organizationId=acme', 400, 'must be an Organization id (a UUID)'],
      ['GET', `/v1.2/me/suppressions?organizationId=${stranger.organizationId}`, 403, ''],
    ];
    for (const [method, path, status, rule] of cases) {
      const answer = await me(token, method, path);
      const problem = (await answer.json()) as Record<string, any>;
      if (status === 400) expect({ path, status: answer.status, problem }).toMatchObject({ status, problem: { type: expect.stringMatching(/\/invalid-parameter$/), errors: [{ pointer: '/organizationId', detail: rule }] } });
      else expect({ path, status: answer.status, detail: problem.detail }).toEqual({ path, status, detail: 'The Organization does not exist or you are not a member of it.' });
    }
  });

  it('rotate cancels the old key\'s schedules unless KeepSchedules; revoke cancels them', async () => {
    const { tenant, token, reader } = await signedInTenant();
    const later = inAbout(60_000).text;
    const first = await schedule(tenant, subjectOf('page rotated'), later);
    const rotated = (await (await me(token, 'POST', '/v1.2/me/api-key/rotate')).json()) as { Key: string };
    expect(await statusOf(tenant, first.ScheduleId, reader)).toBe('Cancelled');

    const second = await schedule(tenant, subjectOf('page kept'), later, rotated.Key);
    const kept = (await (await me(token, 'POST', '/v1.2/me/api-key/rotate', { KeepSchedules: true })).json()) as { Key: string };
    expect(await statusOf(tenant, second.ScheduleId, reader)).toBe('Scheduled');

    const third = await schedule(tenant, subjectOf('page revoked'), later, kept.Key);
    expect((await me(token, 'DELETE', '/v1.2/me/api-key')).status).toBe(204);
    expect(await statusOf(tenant, second.ScheduleId, reader)).toBe('Cancelled');
    expect(await statusOf(tenant, third.ScheduleId, reader)).toBe('Cancelled');
  });
});
