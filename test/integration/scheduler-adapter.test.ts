/**
 * `AwsScheduleTimer` against moto_server's EventBridge Scheduler and SQS (moto 5), on 127.0.0.1:
 * a time past SQS's 15-minute delay becomes a one-time `at()` schedule in the group, in UTC, with
 * no flexible window, deleted after it runs, targeting the queue through the scheduler's role with
 * a retry policy and the dead-letter queue; a time within it goes to the queue directly; arming
 * twice is harmless; disarming a schedule that is gone is too.
 *
 * Needs `moto_server` on the PATH; without it the suite is skipped and says so (under CI=true it
 * fails instead: see test/support/moto.ts).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { CreateScheduleGroupCommand, GetScheduleCommand, ResourceNotFoundException, SchedulerClient } from '@aws-sdk/client-scheduler';
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { AwsScheduleTimer, atExpression, scheduleName } from '../../functions/shared/schedules/timer';
import { describeWithMoto, startMoto } from '../support/moto';
import type { Moto } from '../support/moto';

describeWithMoto('AwsScheduleTimer (moto_server)', () => {
  let moto: Moto;
  let scheduler: SchedulerClient;
  let sqs: SQSClient;
  let timer: AwsScheduleTimer;
  let queueUrl: string;
  const groupName = 'email-send-api-test';
  const roleArn = 'arn:aws:iam::123456789012:role/scheduler';
  const deadLetterArn = 'arn:aws:sqs:us-east-1:123456789012:dead';

  beforeAll(async () => {
    moto = await startMoto();
    scheduler = new SchedulerClient(moto.config);
    sqs = new SQSClient(moto.config);
    queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'schedule-queue' }))).QueueUrl!;
    const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
    await scheduler.send(new CreateScheduleGroupCommand({ Name: groupName }));
    timer = new AwsScheduleTimer(scheduler, sqs, { groupName, targetArn: Attributes!.QueueArn!, roleArn, deadLetterArn, queueUrl });
  }, 20_000);

  afterAll(async () => {
    scheduler?.destroy();
    sqs?.destroy();
    await moto?.stop();
  });

  it('makes a one-time schedule for a time past 15 minutes, deleted after it runs, to the queue with retries and the dead-letter queue', async () => {
    const scheduleId = randomUUID();
    const at = Date.now() + 2 * 60 * 60 * 1_000 + 400;
    await timer.arm(scheduleId, at);
    const schedule = await scheduler.send(new GetScheduleCommand({ Name: scheduleId, GroupName: groupName }));
    expect(schedule).toMatchObject({
      Name: scheduleId,
      GroupName: groupName,
      ScheduleExpression: atExpression(at),
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: {
        RoleArn: roleArn,
        Input: JSON.stringify({ scheduleId }),
        DeadLetterConfig: { Arn: deadLetterArn },
        RetryPolicy: { MaximumEventAgeInSeconds: 86_400, MaximumRetryAttempts: 185 },
      },
    });
    // The whole second at or after the time: never early.
    expect(schedule.ScheduleExpression).toBe(`at(${new Date(Math.ceil(at / 1_000) * 1_000).toISOString().slice(0, 19)})`);
    // moto keeps ActionAfterCompletion only in newer releases; when it answers it, it must be DELETE.
    if (schedule.ActionAfterCompletion !== undefined) expect(schedule.ActionAfterCompletion).toBe('DELETE');

    // Armed again (a retried request): no error, still one schedule.
    await timer.arm(scheduleId, at);
    // A re-armed wait gets a schedule of its own.
    await timer.arm(scheduleId, at + 60_000, 2);
    expect((await scheduler.send(new GetScheduleCommand({ Name: scheduleName(scheduleId, 2), GroupName: groupName }))).ScheduleExpression).toBe(atExpression(at + 60_000));

    await timer.disarm(scheduleId);
    await expect(scheduler.send(new GetScheduleCommand({ Name: scheduleId, GroupName: groupName }))).rejects.toBeInstanceOf(ResourceNotFoundException);
    // Gone already: disarming again is fine.
    await timer.disarm(scheduleId);
  });

  it('sends a time within 15 minutes to the queue directly, with the wake-up as its body', async () => {
    const scheduleId = randomUUID();
    await timer.arm(scheduleId, Date.now());
    const { Messages } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
    expect(Messages?.map((m) => JSON.parse(m.Body!))).toContainEqual({ scheduleId });
    await expect(scheduler.send(new GetScheduleCommand({ Name: scheduleId, GroupName: groupName }))).rejects.toBeInstanceOf(ResourceNotFoundException);
  });
});
