/**
 * A cancel racing its schedule's firing (CONTRACT section 13), against dynalite and the SES
 * emulator with the real schedule store, cancel handler and firing: one conditional write decides
 * each race, so whichever wins, the answers agree with what happened. `Cancelled` means the
 * message was never sent and the schedule stays Cancelled; `AlreadySent` means it was sent,
 * once. Raced many times, the firing starting a little later each time (scaled to how long a cancel
 * takes here), so both winners occur.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { CANCEL_PATH, createCancelHandler } from '../../functions/cancel/handler';
import { fireSchedule } from '../../functions/scheduled/fire';
import type { ScheduleStore } from '../../functions/shared/schedules/schedule-store';
import type { ScheduleTimer } from '../../functions/shared/schedules/timer';
import { httpApiEvent, lambdaContext } from '../support/events';
import type { Harness, Tenant } from '../support/harness';
import { authorised, message, sendBody, useHarness } from '../support/harness';

let harness!: Harness;
let tenant!: Tenant;
useHarness((h, t) => {
  harness = h;
  tenant = t;
});

const silent = new Logger({ serviceName: 'cancel-race-test', logLevel: 'SILENT' });
const timer: ScheduleTimer = { arm: async () => undefined, disarm: async () => undefined };
const ROUNDS = 24;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A message scheduled an hour ahead; its subject finds it in the SES emulator's store. */
async function schedule(scheduling: Harness['deps']['scheduling']): Promise<{ scheduleId: string; subject: string }> {
  const subject = `race ${randomUUID()}`;
  const sendAt = new Date(Math.ceil((Date.now() + 60 * 60 * 1_000) / 1_000) * 1_000).toISOString().slice(0, 19).replace('T', ' ');
  const scheduled = await harness.invoke({ headers: authorised(tenant), body: sendBody(tenant, [message({ Subject: subject, SendAt: sendAt })]) }, { scheduling });
  expect(scheduled.statusCode).toBe(200);
  return { scheduleId: scheduled.body.Messages[0].ScheduleId as string, subject };
}

function setUp(cancelSchedules?: Pick<ScheduleStore, 'heads' | 'cancel' | 'settleNotice'>, fireSchedules?: ScheduleStore) {
  const scheduling = { ...harness.deps.scheduling, timer };
  const store = scheduling.schedules;
  const cancel = createCancelHandler({ ...harness.deps, schedules: cancelSchedules ?? store, timer, notices: undefined, logger: silent, now: Date.now });
  // Every message is due: the firing finds its time has come.
  const due = () => Date.now() + 2 * 60 * 60 * 1_000;
  return {
    scheduling,
    store,
    fire: (scheduleId: string) => fireSchedule(scheduleId, Date.now() + 20_000, { send: harness.deps, schedules: fireSchedules ?? store, timer, notices: undefined, logger: silent, now: due }),
    async cancel(scheduleId: string): Promise<string> {
      const result = (await cancel(httpApiEvent({ path: CANCEL_PATH, headers: authorised(tenant), body: { OrganizationId: tenant.organizationId, ScheduleIds: [scheduleId] } }), lambdaContext())) as APIGatewayProxyStructuredResultV2;
      expect(result.statusCode).toBe(200);
      return (JSON.parse(String(result.body)) as { Messages: { Status: string }[] }).Messages[0]!.Status;
    },
  };
}

/** What the cancel answered must be what happened: Cancelled and never sent, or AlreadySent and sent once. */
async function expectAgreement(race: ReturnType<typeof setUp>, scheduleId: string, subject: string, status: string): Promise<void> {
  const sent = (await harness.sentEmails()).filter((email) => email.subject === subject).length;
  const state = (await race.store.heads([scheduleId])).get(scheduleId)?.state;
  expect({ status, sent, state }).toEqual(status === 'Cancelled' ? { status, sent: 0, state: 'Cancelled' } : { status: 'AlreadySent', sent: 1, state: 'Sent' });
  // A later wake-up (SQS delivers at least once) changes nothing.
  await race.fire(scheduleId);
  expect((await harness.sentEmails()).filter((email) => email.subject === subject)).toHaveLength(sent);
}

describe('cancel racing a firing', () => {
  it(`agrees with what happened, whichever wins, over ${ROUNDS} races`, async () => {
    const race = setUp();
    const outcomes: Record<string, number> = {};
    // How long a cancel's way in takes on this machine now, so the spread of delays below fits it:
    // the median of three after a first, cold one, since one sample (too slow cold, too fast
    // between two pauses) could put every race on one side.
    await race.cancel(randomUUID());
    const samples: number[] = [];
    for (let sample = 0; sample < 3; sample++) {
      const started = Date.now();
      await race.cancel(randomUUID());
      samples.push(Date.now() - started);
    }
    const cancelMs = Math.max(5, samples.sort((a, b) => a - b)[1]!);

    for (let round = 0; round < ROUNDS; round++) {
      const { scheduleId, subject } = await schedule(race.scheduling);
      // The firing starts from at once to twice a cancel's time after the cancel: the cancel's way
      // in (key, Organization) is longer than the firing's, so early rounds go to the firing, late
      // ones to the cancel, and the ones between are close races.
      const delay = (2 * cancelMs * round) / (ROUNDS - 1);
      const [status] = await Promise.all([race.cancel(scheduleId), pause(delay).then(() => race.fire(scheduleId))]);
      outcomes[status] = (outcomes[status] ?? 0) + 1;
      await expectAgreement(race, scheduleId, subject, status);
    }
    // Both winners occurred: the races above were races.
    expect(Object.keys(outcomes).sort()).toEqual(['AlreadySent', 'Cancelled']);
  }, 120_000);

  it('a cancel that read the schedule waiting, then lost the write to the firing\'s claim, answers AlreadySent', async () => {
    const store = harness.deps.scheduling.schedules;
    for (let round = 0; round < 4; round++) {
      // The narrowest window, made to happen: the cancel has read the schedule as Scheduled; the
      // firing claims it; only then does the cancel's conditional write go.
      let read!: () => void;
      let claimed!: () => void;
      const headsRead = new Promise<void>((resolve) => (read = resolve));
      const claim = new Promise<void>((resolve) => (claimed = resolve));
      const cancelSchedules: Pick<ScheduleStore, 'heads' | 'cancel' | 'settleNotice'> = {
        heads: async (ids) => {
          const heads = await store.heads(ids);
          read();
          await claim;
          return heads;
        },
        cancel: (...args) => store.cancel(...args),
        settleNotice: (...args) => store.settleNotice(...args),
      };
      const fireSchedules = new Proxy(store, {
        get(target, name, receiver) {
          if (name === 'claim') return async (...args: Parameters<ScheduleStore['claim']>) => headsRead.then(() => target.claim(...args)).finally(claimed);
          const value = Reflect.get(target, name, receiver) as unknown;
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      const race = setUp(cancelSchedules, fireSchedules);
      const { scheduleId, subject } = await schedule(race.scheduling);
      const [status] = await Promise.all([race.cancel(scheduleId), race.fire(scheduleId)]);
      expect(status).toBe('AlreadySent');
      await expectAgreement(race, scheduleId, subject, status);
    }
  }, 60_000);
});

describe('a cancel whose email.cancelled cannot be queued', () => {
  it('answers Cancelled, keeps the notice owed and the timer armed, and the firing tells it once', async () => {
    const told: { status: string; scheduleId: string }[] = [];
    const disarmed: string[] = [];
    let queueUp = false;
    const notices = {
      notify: async (event: { status: string; scheduleId: string }) => {
        if (!queueUp) throw new Error('the webhook queue is unreachable');
        told.push({ status: event.status, scheduleId: event.scheduleId });
      },
    };
    const keptTimer: ScheduleTimer = { arm: async () => undefined, disarm: async (id) => void disarmed.push(id) };
    const scheduling = { ...harness.deps.scheduling, timer: keptTimer };
    const store = scheduling.schedules;
    const cancel = createCancelHandler({ ...harness.deps, schedules: store, timer: keptTimer, notices, logger: silent, now: Date.now });
    const { scheduleId } = await schedule(scheduling);

    const result = (await cancel(httpApiEvent({ path: CANCEL_PATH, headers: authorised(tenant), body: { OrganizationId: tenant.organizationId, ScheduleIds: [scheduleId] } }), lambdaContext())) as APIGatewayProxyStructuredResultV2;
    expect(result.statusCode).toBe(200);
    expect((JSON.parse(String(result.body)) as { Messages: { Status: string }[] }).Messages[0]!.Status).toBe('Cancelled');
    // Not told, so not settled: the timer stays, owing the notice.
    expect(told).toEqual([]);
    expect(disarmed).toEqual([]);
    expect((await store.load(scheduleId))?.head).toMatchObject({ state: 'Cancelled', noticeOwed: true });

    queueUp = true;
    const fire = () => fireSchedule(scheduleId, Date.now() + 20_000, { send: harness.deps, schedules: store, timer: keptTimer, notices, logger: silent, now: Date.now });
    await fire();
    await fire(); // a redelivered firing tells nothing more
    expect(told).toEqual([{ status: 'Cancelled', scheduleId }]);
  });

  it('once queued, settles the debt and deletes the timer', async () => {
    const told: string[] = [];
    const disarmed: string[] = [];
    const notices = { notify: async (event: { scheduleId: string }) => void told.push(event.scheduleId) };
    const keptTimer: ScheduleTimer = { arm: async () => undefined, disarm: async (id) => void disarmed.push(id) };
    const scheduling = { ...harness.deps.scheduling, timer: keptTimer };
    const store = scheduling.schedules;
    const cancel = createCancelHandler({ ...harness.deps, schedules: store, timer: keptTimer, notices, logger: silent, now: Date.now });
    const { scheduleId } = await schedule(scheduling);
    await cancel(httpApiEvent({ path: CANCEL_PATH, headers: authorised(tenant), body: { OrganizationId: tenant.organizationId, ScheduleIds: [scheduleId] } }), lambdaContext());
    expect(told).toEqual([scheduleId]);
    expect(disarmed).toEqual([scheduleId]);
    const { head } = (await store.load(scheduleId))!;
    expect(head.state).toBe('Cancelled');
    expect(head.noticeOwed).toBeUndefined();
  });
});

describe('a firing whose owed email.cancelled cannot be queued', () => {
  it('owes it again, and the redelivered firing tells it, once', async () => {
    const told: string[] = [];
    let queueUp = false;
    const notices = {
      notify: async (event: { scheduleId: string }) => {
        if (!queueUp) throw new Error('the webhook queue is unreachable');
        told.push(event.scheduleId);
      },
    };
    const scheduling = { ...harness.deps.scheduling, timer };
    const store = scheduling.schedules;
    // Cancelled where no queue could be reached (the admin CLI without the stack's queue): owed.
    const cancel = createCancelHandler({ ...harness.deps, schedules: store, timer, notices: undefined, logger: silent, now: Date.now });
    const { scheduleId } = await schedule(scheduling);
    await cancel(httpApiEvent({ path: CANCEL_PATH, headers: authorised(tenant), body: { OrganizationId: tenant.organizationId, ScheduleIds: [scheduleId] } }), lambdaContext());
    const fire = () => fireSchedule(scheduleId, Date.now() + 20_000, { send: harness.deps, schedules: store, timer, notices, logger: silent, now: Date.now });

    await expect(fire()).rejects.toThrow('the webhook queue is unreachable');
    expect((await store.load(scheduleId))?.head.noticeOwed).toBe(true);
    queueUp = true;
    await fire();
    await fire();
    expect(told).toEqual([scheduleId]);
  });
});
