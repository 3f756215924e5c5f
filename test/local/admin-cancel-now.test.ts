/**
 * The admin CLI's cancellations against a deployed table (`--table`), played by moto_server's
 * DynamoDB, SQS and EventBridge Scheduler: given WEBHOOK_QUEUE_URL and SCHEDULE_GROUP_NAME (the
 * stack outputs WebhookQueueUrl and ScheduleGroupName), `schedule cancel` and `key revoke` delete
 * each cancelled schedule's one-time schedule from the group and queue exactly one
 * `email.cancelled` for it at once, and leave nothing owed (so its timer, if it fires, tells
 * nothing more); without them the notice stays owed for its timer, as before, and the command
 * says so; one without the other is refused before anything changes.
 *
 * Needs `moto_server` (test/support/moto.ts: skipped on a laptop without it, a failure under CI).
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateScheduleGroupCommand, GetScheduleCommand, ResourceNotFoundException, SchedulerClient } from '@aws-sdk/client-scheduler';
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { hashApiKey } from '../../functions/shared/domain/api-keys';
import { DynamoDbScheduleStore } from '../../functions/shared/schedules/schedule-store';
import { AwsScheduleTimer } from '../../functions/shared/schedules/timer';
import { DynamoDbWebhookStore } from '../../functions/shared/webhooks/webhook-store';
import { EXIT_CODES } from '../../infra/admin/command-frame';
import { ensureTable } from '../../infra/local/emulators';
import type { Moto } from '../support/moto';
import { describeWithMoto, startMoto } from '../support/moto';
import { writePendingSchedule } from '../support/pending-schedules';
import { admin, adminJson } from './helpers';

const TABLE = 'admin-cancel-now';
const GROUP = 'EmailSendApi-ScheduleGroup-test';
/** Well past SQS's 15-minute delay, so each schedule gets a one-time schedule in the group. */
const IN_TWO_HOURS = () => Date.now() + 2 * 3_600_000;

describeWithMoto("the admin CLI's cancellations on a deployed stack (moto_server)", () => {
  let moto: Moto;
  let documents: DynamoDBDocumentClient;
  let sqs: SQSClient;
  let scheduler: SchedulerClient;
  let timer: AwsScheduleTimer;
  let schedules: DynamoDbScheduleStore;
  /** The deployed table, without the two settings. */
  let deployed: Record<string, string>;

  beforeAll(async () => {
    moto = await startMoto();
    const dynamodb = new DynamoDBClient(moto.config);
    await ensureTable(dynamodb, TABLE);
    documents = DynamoDBDocumentClient.from(dynamodb, { marshallOptions: { removeUndefinedValues: true } });
    schedules = new DynamoDbScheduleStore(documents, TABLE);
    sqs = new SQSClient(moto.config);
    scheduler = new SchedulerClient(moto.config);
    await scheduler.send(new CreateScheduleGroupCommand({ Name: GROUP }));
    const wakeUps = (await sqs.send(new CreateQueueCommand({ QueueName: 'schedule-queue' }))).QueueUrl!;
    const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: wakeUps, AttributeNames: ['QueueArn'] }));
    timer = new AwsScheduleTimer(scheduler, sqs, { groupName: GROUP, targetArn: Attributes!.QueueArn!, roleArn: 'arn:aws:iam::123456789012:role/scheduler', deadLetterArn: Attributes!.QueueArn!, queueUrl: wakeUps });
    deployed = { DYNAMODB_ENDPOINT: moto.config.endpoint, AWS_REGION: moto.config.region, AWS_ENDPOINT_URL_SQS: moto.config.endpoint, AWS_ENDPOINT_URL_SCHEDULER: moto.config.endpoint };
  }, 30_000);

  afterAll(async () => {
    documents?.destroy();
    sqs?.destroy();
    scheduler?.destroy();
    await moto?.stop();
  });

  /** A fresh webhook queue (so each test reads only its own notices) and the settings naming it. */
  async function withSettings(): Promise<{ env: Record<string, string>; queueUrl: string }> {
    const queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: `webhooks-${randomUUID()}` }))).QueueUrl!;
    return { env: { ...deployed, WEBHOOK_QUEUE_URL: queueUrl, SCHEDULE_GROUP_NAME: GROUP }, queueUrl };
  }

  /** An Organization with a webhook, and a schedule of it armed as the send function arms it. */
  async function armed(organizationId = randomUUID(), userId = randomUUID(), keyHash?: string): Promise<{ organizationId: string; scheduleId: string }> {
    await new DynamoDbWebhookStore(documents, TABLE).put({ organizationId, url: 'https://hooks.example.com/in', sealedSecret: 'sealed', createdAt: new Date().toISOString() });
    const sendAt = IN_TWO_HOURS();
    const scheduleId = await writePendingSchedule(documents, TABLE, { organizationId, userId, ...(keyHash && { keyHash }), sendAt });
    await timer.arm(scheduleId, sendAt);
    return { organizationId, scheduleId };
  }

  /** Every message on the queue now, as (webhook id, event type, ScheduleId). */
  async function queued(queueUrl: string): Promise<{ webhookId: string; type: string; scheduleId: string }[]> {
    const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    return Messages.map((message) => {
      const job = JSON.parse(message.Body!) as { webhookId: string; payload: string };
      const payload = JSON.parse(job.payload) as { type: string; data: { ScheduleId: string } };
      return { webhookId: job.webhookId, type: payload.type, scheduleId: payload.data.ScheduleId };
    });
  }

  const inGroup = (scheduleId: string) =>
    scheduler.send(new GetScheduleCommand({ Name: scheduleId, GroupName: GROUP })).then(
      () => true,
      (error: unknown) => (error instanceof ResourceNotFoundException ? false : Promise.reject(error)),
    );
  const head = async (scheduleId: string) => (await schedules.heads([scheduleId])).get(scheduleId)!;

  it('schedule cancel with the settings: one email.cancelled queued at once, the one-time schedule deleted, nothing owed', async () => {
    const { env, queueUrl } = await withSettings();
    const { organizationId, scheduleId } = await armed();
    expect(await inGroup(scheduleId)).toBe(true);

    expect(await adminJson(env, 'schedule', 'cancel', '--org', organizationId, '--id', scheduleId, '--table', TABLE)).toEqual({ organizationId, scheduleId, status: 'Cancelled', noticeAt: 'now' });
    expect(await queued(queueUrl)).toEqual([{ webhookId: `sch_${scheduleId}_cancelled`, type: 'email.cancelled', scheduleId }]);
    expect(await inGroup(scheduleId)).toBe(false);
    const cancelled = await head(scheduleId);
    expect(cancelled.state).toBe('Cancelled');
    expect(cancelled.noticeOwed).toBeUndefined();
    // What the timer's firing would take to tell it (functions/scheduled/fire.ts): there is nothing.
    expect(await schedules.settleNotice(scheduleId, Date.now())).toBe(false);
    expect(await schedules.organizations.list(organizationId)).toEqual([]);
  });

  it('key revoke with the settings: each schedule the key made is told at once, the others are left alone', async () => {
    const { env, queueUrl } = await withSettings();
    const target = ['--table', TABLE];
    const { id: organizationId } = await adminJson(env, 'org', 'create', '--name', 'Revoked', ...target);
    const { id: userId } = await adminJson(env, 'user', 'create', '--email', `${randomUUID()}@example.net`, ...target);
    await adminJson(env, 'member', 'add', '--org', organizationId, '--user', userId, ...target);
    const { key } = await adminJson(env, 'key', 'generate', '--user', userId, ...target);
    const made = [await armed(organizationId, userId, hashApiKey(key as string)), await armed(organizationId, userId, hashApiKey(key as string))].map((s) => s.scheduleId);
    const other = (await armed(organizationId, randomUUID(), 'another-key')).scheduleId;

    expect(await adminJson(env, 'key', 'revoke', '--user', userId, ...target)).toEqual({ userId, revoked: true, cancelledSchedules: 2, noticeAt: 'now' });
    const notices = await queued(queueUrl);
    expect(notices.map((n) => n.scheduleId).sort()).toEqual([...made].sort());
    expect(notices.every((n) => n.type === 'email.cancelled')).toBe(true);
    for (const scheduleId of made) {
      expect(await inGroup(scheduleId)).toBe(false);
      expect((await head(scheduleId)).noticeOwed).toBeUndefined();
    }
    expect(await inGroup(other)).toBe(true);
    expect((await head(other)).state).toBe('Scheduled');
  });

  it('without the settings: the notice stays owed for the timer, the one-time schedule stays, and the command says so', async () => {
    const { queueUrl } = await withSettings();
    const first = await armed();
    expect(await adminJson(deployed, 'schedule', 'cancel', '--org', first.organizationId, '--id', first.scheduleId, '--table', TABLE)).toEqual({ ...first, status: 'Cancelled', noticeAt: 'send time' });
    expect((await head(first.scheduleId)).noticeOwed).toBe(true);
    expect(await inGroup(first.scheduleId)).toBe(true);
    expect(await queued(queueUrl)).toEqual([]);
    // The timer, when it fires, takes the owed notice, once.
    expect(await schedules.settleNotice(first.scheduleId, Date.now())).toBe(true);
    expect(await schedules.settleNotice(first.scheduleId, Date.now())).toBe(false);

    const second = await armed();
    const human = await admin(deployed, 'schedule', 'cancel', '--org', second.organizationId, '--id', second.scheduleId, '--table', TABLE);
    expect(human).toMatchObject({ code: 0, stderr: '' });
    expect(human.stdout.trim().split('\n')).toEqual([
      `Scheduled message ${second.scheduleId} of Organization ${second.organizationId} is cancelled; it will not be sent`,
      "Their email.cancelled webhooks go out at each message's send time; set WEBHOOK_QUEUE_URL and SCHEDULE_GROUP_NAME (stack outputs WebhookQueueUrl, ScheduleGroupName) to send them at once",
    ]);
  });

  it('one setting without the other is refused before anything is cancelled', async () => {
    const { env } = await withSettings();
    const { organizationId, scheduleId } = await armed();
    const { SCHEDULE_GROUP_NAME: _group, ...halfSet } = env;
    const refused = await admin(halfSet, 'schedule', 'cancel', '--org', organizationId, '--id', scheduleId, '--table', TABLE);
    expect(refused.code).toBe(EXIT_CODES.invalid);
    expect(refused.stderr).toContain('WEBHOOK_QUEUE_URL and SCHEDULE_GROUP_NAME');
    expect((await head(scheduleId)).state).toBe('Scheduled');
    expect(await inGroup(scheduleId)).toBe(true);
  });
});
