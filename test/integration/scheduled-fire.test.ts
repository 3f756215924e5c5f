/**
 * Scheduled messages against dynalite and the SES emulator, with the real schedule store and the
 * send handler (CONTRACT section 13): what the local-stack suite cannot make happen on demand.
 * A quota failure at its time makes the message wait and re-arms its timer, then it is sent; a
 * firing that died after handing the message to SES is never sent twice; an expiry passed
 * meanwhile makes it Expired; a body larger than a DynamoDB item is stored in parts and sent
 * whole; a timer that cannot be armed leaves nothing scheduled; an Idempotency-Key retry gets the
 * same ScheduleId.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Logger } from '@aws-lambda-powertools/logger';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { FireDependencies } from '../../functions/scheduled/fire';
import { fireSchedule } from '../../functions/scheduled/fire';
import type { Mailer, OutgoingEmail } from '../../functions/shared/mail/ports';
import { toSendEmailRequest } from '../../functions/shared/mail/ses-message';
import { SendFailure } from '../../functions/shared/mail/ports';
import { nextUtcMidnight, utcDay } from '../../functions/shared/domain/org-limits';
import { createDynamoDbClient } from '../../functions/shared/runtime/clients';
import { DynamoDbDailyUsage } from '../../functions/shared/store/dynamodb-daily-usage';
import { DynamoDbAdminStore } from '../../infra/admin/admin-store';
import { PART_BYTES } from '../../functions/shared/schedules/message-codec';
import type { ScheduleTimer } from '../../functions/shared/schedules/timer';
import { schedulePartition } from '../../functions/shared/store/table';
import type { Harness, Tenant } from '../support/harness';
import { DAY_MS, clearOfTurn } from '../support/clock';
import { authorised, message, sendBody, startHarness } from '../support/harness';

let harness: Harness;
let tenant: Tenant;

beforeAll(async () => {
  harness = await startHarness();
  tenant = await harness.tenant();
});
afterAll(async () => harness?.stop());

const silent = new Logger({ serviceName: 'scheduled-fire-test', logLevel: 'SILENT' });

/** A timer that only records what it was asked to arm. */
function recordingTimer(): ScheduleTimer & { armed: { scheduleId: string; at: number; attempt: number | undefined }[] } {
  const armed: { scheduleId: string; at: number; attempt: number | undefined }[] = [];
  return { armed, arm: async (scheduleId, at, attempt) => void armed.push({ scheduleId, at, attempt }), disarm: async () => undefined };
}

function sendAtIn(ms: number): string {
  return new Date(Math.ceil((Date.now() + ms) / 1_000) * 1_000).toISOString().slice(0, 19).replace('T', ' ');
}

async function scheduleThroughHandler(timer: ScheduleTimer, messages: unknown[], headers: Record<string, string> = {}, as: Tenant = tenant) {
  const result = await harness.invoke({ headers: authorised(as, headers), body: sendBody(as, messages) }, { scheduling: { ...harness.deps.scheduling, timer } });
  return result;
}

function fireDeps(timer: ScheduleTimer, overrides: { mailer?: Mailer; now?: () => number } = {}): FireDependencies {
  return {
    send: { ...harness.deps, ...(overrides.mailer && { mailer: overrides.mailer }) },
    schedules: harness.deps.scheduling.schedules,
    timer,
    notices: undefined,
    logger: silent,
    now: overrides.now ?? Date.now,
  };
}

describe('SendAt in RFC 3339', () => {
  it('schedules a SendAt written with an offset and fractional seconds at the instant it names', async () => {
    const timer = recordingTimer();
    const at = Math.ceil((Date.now() + 3_600_000) / 1_000) * 1_000 + 250;
    // The same instant, written at UTC+05:30.
    const local = new Date(at + 330 * 60_000).toISOString().slice(0, 23);
    const scheduled = await scheduleThroughHandler(timer, [message({ Subject: `rfc3339 ${randomUUID()}`, SendAt: `${local}+05:30` })]);
    expect(scheduled.statusCode).toBe(200);
    expect(scheduled.body.Messages[0]).toEqual({ Index: 0, Status: 'Scheduled', ScheduleId: expect.any(String) });
    expect(timer.armed).toEqual([{ scheduleId: scheduled.body.Messages[0].ScheduleId, at, attempt: undefined }]);
  });
});

describe('fireSchedule', () => {
  it('makes a message that hits the quota wait, re-arms its timer, and sends it once the wait is over', async () => {
    const timer = recordingTimer();
    const subject = `quota ${randomUUID()}`;
    const scheduled = await scheduleThroughHandler(timer, [message({ Subject: subject, SendAt: sendAtIn(1_000) })]);
    expect(scheduled.statusCode).toBe(200);
    const scheduleId = scheduled.body.Messages[0].ScheduleId as string;
    expect(timer.armed).toEqual([{ scheduleId, at: expect.any(Number), attempt: undefined }]);

    let calls = 0;
    const quotaOnce: Mailer = {
      send: (email, signal) => (++calls === 1 ? Promise.reject(new SendFailure('QuotaExceeded')) : harness.deps.mailer.send(email, signal)),
    };
    // Its time has come (SendAt is within two seconds).
    const due = () => Date.now() + 2_000;
    const first = await fireSchedule(scheduleId, Date.now() + 10_000, fireDeps(timer, { mailer: quotaOnce, now: due }));
    expect(first).toEqual({ kind: 'waiting', until: expect.any(Number) });
    const [head] = [...(await harness.deps.scheduling.schedules.heads([scheduleId])).values()];
    expect(head).toMatchObject({ state: 'Scheduled', attempts: 1 });
    expect(timer.armed.at(-1)).toEqual({ scheduleId, at: head!.dueAt, attempt: 1 });
    expect((await harness.sentEmails()).filter((e) => e.subject === subject)).toHaveLength(0);

    // Woken before the wait is over (the clock as it is, before SendAt and the backoff): it only arms its timer again.
    expect(head!.dueAt).toBeGreaterThan(Date.now() + 1_000);
    expect(await fireSchedule(scheduleId, Date.now() + 10_000, fireDeps(timer, { mailer: quotaOnce }))).toEqual({ kind: 'waiting', until: head!.dueAt });
    expect(calls).toBe(1);
    const late = () => head!.dueAt + 1;
    expect(await fireSchedule(scheduleId, late() + 10_000, fireDeps(timer, { mailer: quotaOnce, now: late }))).toEqual({ kind: 'done', state: 'Sent' });
    expect((await harness.sentEmails()).filter((e) => e.subject === subject)).toHaveLength(1);
    // A late duplicate wake-up sends nothing again.
    expect(await fireSchedule(scheduleId, Date.now() + 10_000, fireDeps(timer))).toEqual({ kind: 'done', state: 'Sent' });
    expect((await harness.sentEmails()).filter((e) => e.subject === subject)).toHaveLength(1);
  });

  it('never sends twice a message whose firing died after handing it to SES: Failed, OutcomeUnknown', async () => {
    const timer = recordingTimer();
    const subject = `crash ${randomUUID()}`;
    const scheduled = await scheduleThroughHandler(timer, [message({ Subject: subject, SendAt: sendAtIn(1_000) })]);
    const scheduleId = scheduled.body.Messages[0].ScheduleId as string;
    const store = harness.deps.scheduling.schedules;
    const claim = randomUUID();
    expect(await store.claim(scheduleId, claim, Date.now() - 1, Date.now())).toBe(true);
    await store.inFlight(scheduleId, claim, Date.now());
    expect(await fireSchedule(scheduleId, Date.now() + 10_000, fireDeps(timer))).toEqual({ kind: 'done', state: 'Failed' });
    expect((await store.heads([scheduleId])).get(scheduleId)).toMatchObject({ state: 'Failed', error: { Code: 'OutcomeUnknown', Retryable: false } });
    expect((await harness.sentEmails()).filter((e) => e.subject === subject)).toHaveLength(0);
  });

  it('never sends twice a message SES took when recording it Sent failed: it stays InFlight, then OutcomeUnknown', async () => {
    const timer = recordingTimer();
    const subject = `sent-unrecorded ${randomUUID()}`;
    const scheduled = await scheduleThroughHandler(timer, [message({ Subject: subject, SendAt: sendAtIn(1_000) })]);
    const scheduleId = scheduled.body.Messages[0].ScheduleId as string;
    const store = harness.deps.scheduling.schedules;
    // SES takes the message; the write that records it Sent fails (a throttled or unreachable table).
    const failingFinish = Object.assign(Object.create(Object.getPrototypeOf(store)) as typeof store, store, {
      finish: async () => {
        throw new Error('table unavailable');
      },
    });
    const due = () => Date.now() + 2_000;
    const deadline = Date.now() + 10_000;
    await expect(fireSchedule(scheduleId, deadline, { ...fireDeps(timer, { now: due }), schedules: failingFinish })).rejects.toThrow('table unavailable');
    expect((await store.heads([scheduleId])).get(scheduleId)).toMatchObject({ state: 'InFlight' });
    // Woken again after the firing's lease: recorded OutcomeUnknown, and not sent a second time.
    const afterLease = () => deadline + 60_000;
    expect(await fireSchedule(scheduleId, afterLease() + 10_000, fireDeps(timer, { now: afterLease }))).toEqual({ kind: 'done', state: 'Failed' });
    expect((await store.heads([scheduleId])).get(scheduleId)).toMatchObject({ state: 'Failed', error: { Code: 'OutcomeUnknown' } });
    expect((await harness.sentEmails()).filter((e) => e.subject === subject)).toHaveLength(1);
  });

  it('makes a message over its Organization\'s daily quota wait for the reset at 00:00 UTC, not wake every few minutes', async () => {
    await clearOfTurn(DAY_MS, 15_000);
    const timer = recordingTimer();
    const quotaTenant = await harness.tenant();
    const documents = createDynamoDbClient(harness.config);
    await new DynamoDbAdminStore(documents, harness.config.tableName).limits.set(quotaTenant.organizationId, { daily: 1 });
    await new DynamoDbDailyUsage(documents, harness.config.tableName).take(quotaTenant.organizationId, utcDay(Date.now()), [1], 1);
    documents.destroy();
    const scheduled = await scheduleThroughHandler(timer, [message({ Subject: `quota-day ${randomUUID()}`, SendAt: sendAtIn(1_000) })], {}, quotaTenant);
    const scheduleId = scheduled.body.Messages[0].ScheduleId as string;
    const due = () => Date.now() + 2_000;
    const fired = await fireSchedule(scheduleId, Date.now() + 10_000, fireDeps(timer, { now: due }));
    expect(fired).toEqual({ kind: 'waiting', until: nextUtcMidnight(Date.now()) });
  });

  it('tags the message with its ScheduleId once, over a client tag of that name a schedule stored before the rule may hold', async () => {
    const timer = recordingTimer();
    const scheduled = await scheduleThroughHandler(timer, [message({ Subject: `tagged ${randomUUID()}`, SendAt: sendAtIn(1_000), Tags: { invoice: 'inv-7' } })]);
    const scheduleId = scheduled.body.Messages[0].ScheduleId as string;
    const store = harness.deps.scheduling.schedules;
    const olderData = Object.assign(Object.create(Object.getPrototypeOf(store)) as typeof store, store, {
      load: async (id: string) => {
        const loaded = await store.load(id);
        return loaded?.message ? { ...loaded, message: { ...loaded.message, tags: { ...loaded.message.tags, ScheduleId: 'client-value' } } } : loaded;
      },
    });
    const sent: OutgoingEmail[] = [];
    const recording: Mailer = { send: (email, signal) => (sent.push(email), harness.deps.mailer.send(email, signal)) };
    const due = () => Date.now() + 2_000;
    expect(await fireSchedule(scheduleId, Date.now() + 10_000, { ...fireDeps(timer, { mailer: recording, now: due }), schedules: olderData })).toEqual({ kind: 'done', state: 'Sent' });
    const { EmailTags } = await toSendEmailRequest(sent[0]!);
    expect(EmailTags!.filter((tag) => tag.Name === 'ScheduleId')).toEqual([{ Name: 'ScheduleId', Value: scheduleId }]);
    expect(EmailTags).toContainEqual({ Name: 'invoice', Value: 'inv-7' });
  });

  it('reports Expired when the message\'s ExpirationDateTime passed before its turn', async () => {
    const timer = recordingTimer();
    const subject = `expired ${randomUUID()}`;
    const scheduled = await scheduleThroughHandler(timer, [message({ Subject: subject, SendAt: sendAtIn(1_000), ExpirationDateTime: sendAtIn(2_000) })]);
    const scheduleId = scheduled.body.Messages[0].ScheduleId as string;
    await new Promise((resolve) => setTimeout(resolve, 3_100));
    expect(await fireSchedule(scheduleId, Date.now() + 10_000, fireDeps(timer))).toEqual({ kind: 'done', state: 'Expired' });
    expect((await harness.sentEmails()).filter((e) => e.subject === subject)).toHaveLength(0);
  });
});

describe('scheduling', () => {
  it('stores a body larger than an item in parts, and sends it whole', async () => {
    const timer = recordingTimer();
    const subject = `large ${randomUUID()}`;
    // Random text does not compress away: the stored body stays well over one part.
    const html = `<p>${randomBytes(1_000_000).toString('base64')}</p>`;
    const scheduled = await scheduleThroughHandler(timer, [message({ Subject: subject, HtmlContent: html, SendAt: sendAtIn(1_000) })]);
    const scheduleId = scheduled.body.Messages[0].ScheduleId as string;
    const documents = createDynamoDbClient(harness.config);
    try {
      const { Items } = await documents.send(new QueryCommand({ TableName: harness.config.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': schedulePartition(scheduleId) } }));
      const parts = (Items ?? []).filter((item) => String(item.sk).startsWith('PART#'));
      expect(parts.length).toBeGreaterThan(1);
      for (const part of parts) expect((part.data as Uint8Array).length).toBeLessThanOrEqual(PART_BYTES);
    } finally {
      documents.destroy();
    }
    expect(await fireSchedule(scheduleId, Date.now() + 20_000, fireDeps(timer, { now: () => Date.now() + 2_000 }))).toEqual({ kind: 'done', state: 'Sent' });
    const [email] = (await harness.sentEmails()).filter((e) => e.subject === subject);
    expect(email!.body.html).toBe(html);
  });

  it('leaves nothing scheduled when the timer cannot be armed: Failed, ScheduleUnavailable', async () => {
    const before = (await harness.deps.scheduling.schedules.pending()).length;
    const broken: ScheduleTimer = { arm: () => Promise.reject(new Error('scheduler down')), disarm: async () => undefined };
    const result = await scheduleThroughHandler(broken, [message({ SendAt: sendAtIn(60_000) })]);
    expect(result.statusCode).toBe(502);
    expect(result.body.Messages[0]).toEqual({ Index: 0, Status: 'Failed', Error: { Code: 'ScheduleUnavailable', Message: expect.any(String), Retryable: true } });
    expect((await harness.deps.scheduling.schedules.pending()).length).toBe(before);
  });

  it('gives a retry with the same Idempotency-Key the same ScheduleId, and schedules once', async () => {
    const timer = recordingTimer();
    const body = [message({ SendAt: sendAtIn(60_000) }), message()];
    const headers = { 'idempotency-key': randomUUID() };
    const first = await scheduleThroughHandler(timer, body, headers);
    const again = await scheduleThroughHandler(timer, body, headers);
    expect(first.body.Messages.map((m: any) => m.Status)).toEqual(['Scheduled', 'Sent']);
    expect(again.headers['Idempotent-Replayed']).toBe('true');
    expect(again.body.Messages[0].ScheduleId).toBe(first.body.Messages[0].ScheduleId);
    expect(timer.armed).toHaveLength(1);
  });
});
