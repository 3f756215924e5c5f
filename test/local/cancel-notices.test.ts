/**
 * Every cancellation of a scheduled message tells the Organization's webhook `email.cancelled`,
 * exactly once, whoever cancelled it: the settings page's API (Cancel, rotate without
 * `KeepSchedules`, revoke) at once, through the local stack over real HTTP with a webhook receiver
 * on 127.0.0.1 as a client sees it; and nothing cancelled is ever sent.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestStack, Tenant } from './helpers';
import { adminEnv, adminJson, hookedTenant, inAbout, messageBody, send, sentEmails, startTestStack } from './helpers';

let stack: TestStack;
let env: Record<string, string>;

beforeAll(async () => {
  stack = await startTestStack();
  env = adminEnv(stack);
});
afterAll(async () => stack?.stop());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const subjectOf = (tag: string) => `Notice ${tag} ${Math.random().toString(36).slice(2)}`;

interface Hooked {
  readonly tenant: Tenant;
  readonly token: string;
  /** The verified `data` of every `email.cancelled` the Organization's webhook received so far. */
  cancelled(): { ScheduleId: string; Status: string }[];
  close(): void;
}

async function noticedTenant(): Promise<Hooked> {
  const hooked = await hookedTenant(stack, env, 'Notices');
  return {
    ...hooked,
    cancelled: () =>
      hooked
        .events()
        .filter((event) => event.type === 'email.cancelled')
        .map((event) => event.data as { ScheduleId: string; Status: string }),
  };
}

async function schedule(who: Tenant, subject: string, at: string, apiKey = who.apiKey): Promise<string> {
  const response = await send(stack, apiKey, messageBody(who.organizationId, { SendAt: at, Subject: subject, To: ['success@simulator.amazonses.com'] }));
  return ((await response.json()) as { Messages: { ScheduleId: string }[] }).Messages[0]!.ScheduleId;
}

/** Waits up to `ms` for `count` `email.cancelled`, then a little longer to see no more come. */
async function cancelledNotices(hooked: Hooked, count: number, ms: number): Promise<{ ScheduleId: string; Status: string }[]> {
  const end = Date.now() + ms;
  while (hooked.cancelled().length < count && Date.now() < end) await sleep(50);
  await sleep(500);
  return hooked.cancelled();
}

const ids = (notices: { ScheduleId: string }[]) => notices.map((notice) => notice.ScheduleId).sort();
const noneSent = async (...subjects: string[]) => expect((await sentEmails(stack.sesUrl)).filter((email) => subjects.includes(email.subject ?? ''))).toEqual([]);

const me = (token: string, method: string, path: string, body?: unknown) =>
  fetch(`${stack.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });

describe("email.cancelled for the settings page's cancellations", () => {
  it('rotate without KeepSchedules tells each cancelled schedule at once, once; Cancel and revoke too; none is sent', async () => {
    const hooked = await noticedTenant();
    try {
      const { tenant, token } = hooked;
      // Ten seconds ahead: a rotate, a cancel and a revoke, each after a schedule, all come before it.
      const when = inAbout(10_000);
      const subjects = [subjectOf('rotated 1'), subjectOf('rotated 2'), subjectOf('cancel'), subjectOf('revoked')];
      const rotatedAway = [await schedule(tenant, subjects[0]!, when.text), await schedule(tenant, subjects[1]!, when.text)];
      const rotated = (await (await me(token, 'POST', '/v1.2/me/api-key/rotate')).json()) as { Key: string };
      // Promptly: long before the schedules' own time.
      expect(ids(await cancelledNotices(hooked, 2, 2_000))).toEqual([...rotatedAway].sort());
      expect(hooked.cancelled().every((notice) => notice.Status === 'Cancelled')).toBe(true);

      const button = await schedule(tenant, subjects[2]!, when.text, rotated.Key);
      const answer = await me(token, 'DELETE', `/v1.2/me/schedules?organizationId=${tenant.organizationId}&scheduleId=${button}`);
      expect(await answer.json()).toEqual({ ScheduleId: button, Status: 'Cancelled' });
      expect(ids(await cancelledNotices(hooked, 3, 2_000))).toEqual([...rotatedAway, button].sort());

      const revoked = await schedule(tenant, subjects[3]!, when.text, rotated.Key);
      expect((await me(token, 'DELETE', '/v1.2/me/api-key')).status).toBe(204);
      expect(ids(await cancelledNotices(hooked, 4, 2_000))).toEqual([...rotatedAway, button, revoked].sort());

      // Past their time: still one notice each, and nothing went to SES.
      await sleep(when.at - Date.now() + 2_000);
      expect(ids(hooked.cancelled())).toEqual([...rotatedAway, button, revoked].sort());
      await noneSent(...subjects);
    } finally {
      hooked.close();
    }
  });
});

describe("email.cancelled for the admin command line's cancellations", () => {
  it('key revoke: one email.cancelled for each schedule it cancelled, at the latest at its time; none is sent', async () => {
    const hooked = await noticedTenant();
    try {
      const { tenant } = hooked;
      // Seven seconds ahead: the admin command (a process of its own) comes well before it.
      const when = inAbout(7_000);
      const subjects = [subjectOf('cli revoked 1'), subjectOf('cli revoked 2')];
      const made = [await schedule(tenant, subjects[0]!, when.text), await schedule(tenant, subjects[1]!, when.text)];
      expect(await adminJson(env, 'key', 'revoke', '--user', tenant.userId)).toEqual({ userId: tenant.userId, revoked: true, cancelledSchedules: 2, noticeAt: 'send time' });
      expect(ids(await cancelledNotices(hooked, 2, when.at - Date.now() + 3_000))).toEqual([...made].sort());
      // A while later still one each: the timer told it once.
      await sleep(1_500);
      expect(ids(hooked.cancelled())).toEqual([...made].sort());
      await noneSent(...subjects);
    } finally {
      hooked.close();
    }
  });

  it('schedule cancel: one email.cancelled, at the latest at its time; the rest is left alone', async () => {
    const hooked = await noticedTenant();
    try {
      const { tenant } = hooked;
      // Seven seconds ahead: the admin command (a process of its own) comes well before it.
      const when = inAbout(7_000);
      const [stopped, left] = [subjectOf('cli stopped'), subjectOf('cli left')];
      const a = await schedule(tenant, stopped, when.text);
      await schedule(tenant, left, when.text);
      expect(await adminJson(env, 'schedule', 'cancel', '--org', tenant.organizationId, '--id', a)).toEqual({ organizationId: tenant.organizationId, scheduleId: a, status: 'Cancelled', noticeAt: 'send time' });
      expect(ids(await cancelledNotices(hooked, 1, when.at - Date.now() + 3_000))).toEqual([a]);
      await sleep(1_500);
      expect(ids(hooked.cancelled())).toEqual([a]);
      await noneSent(stopped);
      expect((await sentEmails(stack.sesUrl)).filter((email) => email.subject === left)).toHaveLength(1);
    } finally {
      hooked.close();
    }
  });
});
