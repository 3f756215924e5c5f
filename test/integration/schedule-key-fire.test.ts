/**
 * The scheduled-send function's own wall of "a schedule dies with its key" (security audit round
 * 3, finding 4), against dynalite and the SES emulator with the real schedule store and the send
 * handler: a schedule whose key was revoked or rotated away without its schedules being cancelled
 * (made while the key was being revoked, or a retirement cut short) is `Cancelled` at its time and
 * never sent, while one whose key is still current is sent; and a schedule's place under the
 * Organization's bound is given back when it is sent, as when it is cancelled.
 */
import { randomUUID } from 'node:crypto';
import { hashApiKey } from '../../functions/shared/domain/api-keys';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Logger } from '@aws-lambda-powertools/logger';
import type { FireDependencies } from '../../functions/scheduled/fire';
import { fireSchedule } from '../../functions/scheduled/fire';
import type { ScheduleTimer } from '../../functions/shared/schedules/timer';
import { cancelSchedule } from '../../functions/shared/schedules/key-schedules';
import { OrganizationSchedules } from '../../functions/shared/schedules/organization-schedules';
import type { ScheduleEvent, ScheduleNotices } from '../../functions/shared/schedules/notices';
import type { Harness, Tenant } from '../support/harness';
import { authorised, message, sendBody, startHarness } from '../support/harness';

let harness: Harness;

beforeAll(async () => {
  harness = await startHarness();
});
afterAll(async () => harness?.stop());

const timer: ScheduleTimer = { arm: async () => undefined, disarm: async () => undefined };
const fireDeps: () => FireDependencies = () => ({
  send: harness.deps,
  schedules: harness.deps.scheduling.schedules,
  timer,
  notices: undefined,
  logger: new Logger({ serviceName: 'schedule-key-fire-test', logLevel: 'SILENT' }),
  // Its time has come.
  now: () => Date.now() + 120_000,
});
const inAMinute = () => new Date(Math.ceil((Date.now() + 60_000) / 1_000) * 1_000).toISOString().slice(0, 19).replace('T', ' ');

async function schedule(who: Tenant, subject: string, apiKey = who.apiKey) {
  const result = await harness.invoke({ headers: authorised({ ...who, apiKey }), body: sendBody(who, [message({ Subject: subject, SendAt: inAMinute() })]) }, { scheduling: { ...harness.deps.scheduling, timer } });
  return result.body.Messages[0] as { Status: string; ScheduleId?: string; Error?: { Code: string } };
}

const sent = async (subject: string) => (await harness.sentEmails()).filter((email) => email.subject === subject);
const fire = (scheduleId: string) => fireSchedule(scheduleId, Date.now() + 10_000, fireDeps());

describe('at its time, a schedule is sent only while its key is current', () => {
  it('is Cancelled, never sent, when its key was revoked meanwhile', async () => {
    const tenant = await harness.tenant();
    const subject = `revoked ${randomUUID()}`;
    const { ScheduleId } = await schedule(tenant, subject);
    await harness.admin.revokeKey(tenant.userId);
    expect(await fire(ScheduleId!)).toEqual({ kind: 'done', state: 'Cancelled' });
    expect((await harness.deps.scheduling.schedules.heads([ScheduleId!])).get(ScheduleId!)).toMatchObject({ state: 'Cancelled' });
    expect(await sent(subject)).toHaveLength(0);
  });

  it('is Cancelled when its key was rotated away, while one made with the new key is sent', async () => {
    const tenant = await harness.tenant();
    const [old, fresh] = [`rotated ${randomUUID()}`, `fresh ${randomUUID()}`];
    const first = await schedule(tenant, old);
    const { key } = await harness.admin.rotateKey(tenant.userId);
    const second = await schedule(tenant, fresh, key);
    expect(await fire(first.ScheduleId!)).toEqual({ kind: 'done', state: 'Cancelled' });
    expect(await fire(second.ScheduleId!)).toEqual({ kind: 'done', state: 'Sent' });
    expect(await sent(old)).toHaveLength(0);
    expect(await sent(fresh)).toHaveLength(1);
  });
});

describe('at its time, a schedule is sent only while its key may send', () => {
  it('is Cancelled, never sent, when it was moved to a key without the send scope (a rotate refuses that; the firing checks too)', async () => {
    const tenant = await harness.tenant();
    const subject = `unscoped ${randomUUID()}`;
    const { ScheduleId } = await schedule(tenant, subject);
    const { key } = await harness.admin.rotateKey(tenant.userId, { policy: { scopes: ['status'] } });
    expect(await new OrganizationSchedules(harness.admin.client, harness.admin.tableName).rekey(tenant.organizationId, ScheduleId!, hashApiKey(tenant.apiKey), hashApiKey(key))).toBe(true);
    expect(await fire(ScheduleId!)).toEqual({ kind: 'done', state: 'Cancelled' });
    expect(await sent(subject)).toHaveLength(0);
  });
});

describe('at its time, a schedule is sent only while its key has not expired (docs/keys.md)', () => {
  it('is Cancelled, never sent, when its key expired before its time, while one whose key outlives its time is sent', async () => {
    const tenant = await harness.tenant();
    const [dies, lives] = [`expired ${randomUUID()}`, `lasting ${randomUUID()}`];
    // Valid when the message is scheduled; the firing below happens two minutes on.
    const short = await harness.admin.rotateKey(tenant.userId, { policy: { expiresAt: new Date(Date.now() + 90_000).toISOString() } });
    const first = await schedule(tenant, dies, short.key);
    expect(first.Status).toBe('Scheduled');
    expect(await fire(first.ScheduleId!)).toEqual({ kind: 'done', state: 'Cancelled' });
    expect((await harness.deps.scheduling.schedules.heads([first.ScheduleId!])).get(first.ScheduleId!)).toMatchObject({ state: 'Cancelled' });

    const long = await harness.admin.rotateKey(tenant.userId, { policy: { expiresAt: new Date(Date.now() + 3_600_000).toISOString() } });
    const second = await schedule(tenant, lives, long.key);
    expect(await fire(second.ScheduleId!)).toEqual({ kind: 'done', state: 'Sent' });
    expect(await sent(dies)).toHaveLength(0);
    expect(await sent(lives)).toHaveLength(1);
  });
});

describe("an Organization's bound on pending schedules", () => {
  it('refuses past the bound with QuotaExceeded, and gives the place back once the schedule is sent or cancelled by its key', async () => {
    const tenant = await harness.tenant();
    await harness.admin.limits.set(tenant.organizationId, { scheduled: 1 });
    const first = await schedule(tenant, `first ${randomUUID()}`);
    expect(first.Status).toBe('Scheduled');
    expect(await schedule(tenant, `over ${randomUUID()}`)).toMatchObject({ Status: 'Failed', Error: { Code: 'QuotaExceeded' } });
    expect(await fire(first.ScheduleId!)).toEqual({ kind: 'done', state: 'Sent' });

    const second = await schedule(tenant, `second ${randomUUID()}`);
    expect(second.Status).toBe('Scheduled');
    const { key } = await harness.admin.rotateKey(tenant.userId);
    expect(await fire(second.ScheduleId!)).toEqual({ kind: 'done', state: 'Cancelled' });
    expect((await schedule(tenant, `third ${randomUUID()}`, key)).Status).toBe('Scheduled');
  });
});

describe('a schedule cancelled where no webhook queue was reached (the admin command line)', () => {
  it('tells its email.cancelled when its timer fires, exactly once however often the wake-up comes', async () => {
    const tenant = await harness.tenant();
    const subject = `owed ${randomUUID()}`;
    const { ScheduleId } = await schedule(tenant, subject);
    const { schedules } = harness.deps.scheduling;
    const head = (await schedules.heads([ScheduleId!])).get(ScheduleId!)!;
    expect(await cancelSchedule(head, { schedules, timer: undefined, notices: undefined, now: Date.now, warn: () => undefined })).toBe(true);

    const told: ScheduleEvent[] = [];
    const notices: ScheduleNotices = { notify: async (notice) => void told.push(notice) };
    const redelivered = () => fireSchedule(ScheduleId!, Date.now() + 10_000, { ...fireDeps(), notices });
    // The wake-up, redelivered at once and again later.
    expect(await Promise.all([redelivered(), redelivered()])).toEqual([{ kind: 'done', state: 'Cancelled' }, { kind: 'done', state: 'Cancelled' }]);
    expect(await redelivered()).toEqual({ kind: 'done', state: 'Cancelled' });
    expect(told).toEqual([expect.objectContaining({ status: 'Cancelled', scheduleId: ScheduleId, organizationId: tenant.organizationId })]);
    expect(await sent(subject)).toHaveLength(0);
  });
});
