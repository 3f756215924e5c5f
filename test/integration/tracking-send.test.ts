/**
 * Open and click tracking on the send side (CONTRACT section 17 items 1 and 2), through the real
 * send handler against dynalite and the SES emulator, with a recording proxy in front of the
 * emulator so each SendEmail request can be read as SES would get it: the configuration set a
 * message names (tracked or untracked, its own choice or its Organization's default), for written
 * and templated messages, in a batch of mixed tracking, and for a scheduled message at its time
 * (the tracking it was accepted with, whatever the default became meanwhile).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Logger } from '@aws-lambda-powertools/logger';
import { fireSchedule } from '../../functions/scheduled/fire';
import { TestMailer } from '../../functions/shared/mail/test-mailer';
import { SesMailer } from '../../functions/shared/mail/ses-mailer';
import { createSesClient } from '../../functions/shared/runtime/clients';
import type { ScheduleTimer } from '../../functions/shared/schedules/timer';
import { DynamoDbTemplateStore } from '../../functions/shared/templates/template-store';
import { OrganizationTrackingStore } from '../../infra/admin/tracking-store';
import type { Harness, Tenant } from '../support/harness';
import { authorised, message, sendBody, startHarness } from '../support/harness';
import type { RecordingSesProxy } from '../support/recording-ses-proxy';
import { startRecordingSesProxy } from '../support/recording-ses-proxy';

const BASE = 'EmailApi-Set';
let harness: Harness;
let proxy: RecordingSesProxy;
let mailer: SesMailer;
let defaults: OrganizationTrackingStore;

beforeAll(async () => {
  harness = await startHarness({ SES_CONFIGURATION_SET: BASE });
  proxy = await startRecordingSesProxy(harness.ses.endpoint);
  // The composition root's mailer, pointed at the recording proxy instead of the emulator itself.
  mailer = new SesMailer(createSesClient({ ...harness.config, sesEndpoint: proxy.endpoint }), harness.config.sesConfigurationSet);
  defaults = new OrganizationTrackingStore(harness.admin.client, harness.config.tableName);
});
afterAll(async () => {
  await proxy?.close();
  await harness?.stop();
});

/** What SES was asked to send with this subject: the configuration set and HTML of each request. */
function sendsOf(subject: string): { set: string | undefined; html: string | undefined }[] {
  return proxy.calls
    .filter((call) => call.path === '/v2/email/outbound-emails' && call.body.Content?.Simple?.Subject?.Data === subject)
    .map((call) => ({ set: call.body.ConfigurationSetName, html: call.body.Content.Simple.Body?.Html?.Data }));
}

async function send(tenant: Tenant, messages: unknown[]) {
  const result = await harness.invoke({ headers: authorised(tenant), body: sendBody(tenant, messages) }, { mailer });
  expect(result.statusCode).toBe(200);
  return result;
}

const HTML = '<p>Hi</p><a data-no-track href="https://example.com/account">account</a> <a href="https://example.com/news">news</a>';
const MARKED = '<p>Hi</p><a ses:no-track href="https://example.com/account">account</a> <a href="https://example.com/news">news</a>';

describe('the configuration set of each message', () => {
  it('sends untracked mail through the base set, its HTML exactly as written', async () => {
    const tenant = await harness.tenant();
    const subject = `untracked ${randomUUID()}`;
    await send(tenant, [message({ Subject: subject, HtmlContent: HTML })]);
    expect(sendsOf(subject)).toEqual([{ set: BASE, html: HTML }]);
  });

  it('sends each message of a batch through the set of its own tracking, data-no-track marked for SES in tracked HTML only', async () => {
    const tenant = await harness.tenant();
    const subject = (n: number) => `mixed ${n} ${randomUUID()}`;
    const subjects = [0, 1, 2, 3, 4].map(subject);
    await send(tenant, [
      message({ Subject: subjects[0], HtmlContent: HTML, Tracking: { Opens: true, Clicks: true } }),
      message({ Subject: subjects[1], HtmlContent: HTML, Tracking: { Opens: true } }),
      message({ Subject: subjects[2], HtmlContent: HTML, Tracking: { Clicks: true, Opens: null } }),
      message({ Subject: subjects[3], HtmlContent: HTML, Tracking: { Opens: false, Clicks: false } }),
      message({ Subject: subjects[4], HtmlContent: HTML }),
    ]);
    expect(subjects.map((s) => sendsOf(s))).toEqual([
      [{ set: `${BASE}-track-opens-clicks`, html: MARKED }],
      [{ set: `${BASE}-track-opens`, html: MARKED }],
      [{ set: `${BASE}-track-clicks`, html: MARKED }],
      [{ set: BASE, html: HTML }],
      [{ set: BASE, html: HTML }],
    ]);
  });

  it('applies the Organization\'s default to messages without Tracking, switch by switch, and a message\'s own choice over it', async () => {
    const tenant = await harness.tenant();
    await defaults.set(tenant.organizationId, { opens: true });
    const subjects = [0, 1, 2].map((n) => `default ${n} ${randomUUID()}`);
    await send(tenant, [
      message({ Subject: subjects[0] }),
      message({ Subject: subjects[1], Tracking: { Clicks: true } }),
      message({ Subject: subjects[2], Tracking: { Opens: false } }),
    ]);
    expect(subjects.map((s) => sendsOf(s)[0]?.set)).toEqual([`${BASE}-track-opens`, `${BASE}-track-opens-clicks`, BASE]);
    // Another Organization's default is its own.
    const other = await harness.tenant();
    const subject = `other ${randomUUID()}`;
    await send(other, [message({ Subject: subject })]);
    expect(sendsOf(subject)[0]?.set).toBe(BASE);
  });

  it('tracks a templated message as asked, its rendered HTML marked', async () => {
    const tenant = await harness.tenant();
    const subject = `templated ${randomUUID()}`;
    await new DynamoDbTemplateStore(harness.admin.client, harness.config.tableName).save(tenant.organizationId, 'welcome', { Subject: subject, HtmlContent: '<a data-no-track href="https://example.com/{{who}}">me</a>' }, new Date());
    await send(tenant, [{ From: 'noreply@example.com', To: ['alice@example.org'], Template: { Name: 'welcome', Variables: { who: 'alice' } }, Tracking: { Clicks: true } }]);
    expect(sendsOf(subject)).toEqual([{ set: `${BASE}-track-clicks`, html: '<a ses:no-track href="https://example.com/alice">me</a>' }]);
  });

  it('holds an Idempotency-Key to its Tracking: the same key with other tracking is another request (422), sending nothing', async () => {
    const tenant = await harness.tenant();
    const subject = `idempotent ${randomUUID()}`;
    const key = { 'idempotency-key': randomUUID() };
    const first = await harness.invoke({ headers: authorised(tenant, key), body: sendBody(tenant, [message({ Subject: subject, Tracking: { Opens: true } })]) }, { mailer });
    expect(first.statusCode).toBe(200);
    const other = await harness.invoke({ headers: authorised(tenant, key), body: sendBody(tenant, [message({ Subject: subject })]) }, { mailer });
    expect(other.statusCode).toBe(422);
    const replay = await harness.invoke({ headers: authorised(tenant, key), body: sendBody(tenant, [message({ Subject: subject, Tracking: { Opens: true } })]) }, { mailer });
    expect(replay.headers['Idempotent-Replayed']).toBe('true');
    expect(sendsOf(subject)).toEqual([{ set: `${BASE}-track-opens`, html: undefined }]);
  });

  it('refuses a bad Tracking with its pointer and sends nothing of the request', async () => {
    const tenant = await harness.tenant();
    const subject = `refused ${randomUUID()}`;
    const result = await harness.invoke(
      { headers: authorised(tenant), body: sendBody(tenant, [message({ Subject: subject }), message({ Subject: subject, Tracking: { Opens: 'yes' } })]) },
      { mailer },
    );
    expect(result.statusCode).toBe(400);
    expect(result.body.errors).toEqual([{ pointer: '/Messages/1/Tracking/Opens', detail: 'must be true or false' }]);
    expect(sendsOf(subject)).toEqual([]);
  });
});

describe('a scheduled message', () => {
  const timer: ScheduleTimer = { arm: async () => undefined, disarm: async () => undefined };
  const silent = new Logger({ serviceName: 'tracking-send-test', logLevel: 'SILENT' });
  const fire = (scheduleId: string) =>
    fireSchedule(scheduleId, Date.now() + 10_000, { send: { ...harness.deps, mailer }, schedules: harness.deps.scheduling.schedules, timer, notices: undefined, logger: silent, now: () => Date.now() + 3_600_000 });

  it('goes out at its time with the tracking it was accepted with, whatever the default became meanwhile', async () => {
    const tenant = await harness.tenant();
    const sendAt = new Date(Date.now() + 1_800_000).toISOString().slice(0, 19).replace('T', ' ');
    const subjects = [0, 1].map((n) => `scheduled ${n} ${randomUUID()}`);
    const result = await harness.invoke(
      { headers: authorised(tenant), body: sendBody(tenant, [message({ Subject: subjects[0], SendAt: sendAt, Tracking: { Clicks: true } }), message({ Subject: subjects[1], SendAt: sendAt })]) },
      { mailer, scheduling: { ...harness.deps.scheduling, timer } },
    );
    expect(result.body.Messages.map((m: { Status: string }) => m.Status)).toEqual(['Scheduled', 'Scheduled']);
    await defaults.set(tenant.organizationId, { opens: true, clicks: false });
    for (const { ScheduleId } of result.body.Messages) expect(await fire(ScheduleId)).toEqual({ kind: 'done', state: 'Sent' });
    expect(subjects.map((s) => sendsOf(s)[0]?.set)).toEqual([`${BASE}-track-clicks`, BASE]);
  });
});

describe('test mode', () => {
  it('names the tracked set in the simulated events, as a live send would, and simulates no open or click', async () => {
    const tenant = await harness.tenant();
    const { key } = await harness.admin.rotateKey(tenant.userId, { test: true });
    const keyed = { ...tenant, apiKey: key };
    const published: Record<string, any>[] = [];
    const testMailer = new TestMailer({ publish: async (events) => void published.push(...events) }, { region: 'us-east-1', configurationSet: BASE });
    const result = await harness.invoke({ headers: authorised(keyed), body: sendBody(keyed, [message({ Tracking: { Opens: true, Clicks: true } }), message()]) }, { testMailer });
    expect(result.body.Messages.map((m: { MessageId: string }) => m.MessageId)).toEqual([expect.stringMatching(/^test-/), expect.stringMatching(/^test-/)]);
    const setOf = (messageId: string) => [...new Set(published.filter((e) => e.detail.mail.messageId === messageId).map((e) => e.detail.mail.tags['ses:configuration-set'][0]))];
    expect(setOf(result.body.Messages[0].MessageId)).toEqual([`${BASE}-track-opens-clicks`]);
    expect(setOf(result.body.Messages[1].MessageId)).toEqual([BASE]);
    expect(published.map((e) => e.detail.eventType)).not.toContain('Open');
    expect(published.map((e) => e.detail.eventType)).not.toContain('Click');
  });
});
