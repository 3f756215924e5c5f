/**
 * What makes a scheduled message fire at its time (CONTRACT section 13, item 4). The schedule
 * itself is in the table (schedule-store.ts); a timer only has to wake the scheduled-send
 * function with its id at the right time, at least once. Waking it early, late or twice is
 * harmless: the firing reads the schedule's state and claims it with a conditional write.
 *
 * In AWS (`AwsScheduleTimer`): a time within SQS's 15-minute delay goes to the schedule queue
 * directly with `DelaySeconds` (to the second, and one call); a later one becomes an EventBridge
 * Scheduler one-time schedule (`at(...)`, UTC, no flexible window, deleted after it ran) whose
 * target is that same queue, with a retry policy and a dead-letter queue for what it cannot
 * deliver. Locally, infra/local/local-scheduler.ts plays both.
 */
import { ConflictException, CreateScheduleCommand, DeleteScheduleCommand, ResourceNotFoundException } from '@aws-sdk/client-scheduler';
import type { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { SchedulerConfig } from '../runtime/config';

export interface ScheduleTimer {
  /**
   * Wakes the scheduled-send function for the schedule at `at` (epoch ms). `attempt` > 0 re-arms
   * a schedule that had to wait (throttling, a quota): each arming is its own timer.
   */
  arm(scheduleId: string, at: number, attempt?: number): Promise<void>;
  /** Best effort: a cancelled schedule that fires anyway does nothing. */
  disarm(scheduleId: string): Promise<void>;
}

/** What the timer hands the scheduled-send function: an SQS body, or the schedule's input. */
export interface ScheduleWakeUp {
  readonly scheduleId: string;
}

/** SQS's longest `DelaySeconds`. */
export const MAX_QUEUE_DELAY_SECONDS = 900;
/** How long EventBridge Scheduler keeps trying to deliver (its maximum: 24 hours, 185 retries). */
const DELIVERY_RETRY = { MaximumEventAgeInSeconds: 86_400, MaximumRetryAttempts: 185 };

/** The schedule's name in its group: letters, digits, `-`, `_` and `.`; at most 64 characters. */
export function scheduleName(scheduleId: string, attempt = 0): string {
  return attempt > 0 ? `${scheduleId}-r${attempt}` : scheduleId;
}

/** `at(yyyy-mm-ddThh:mm:ss)` of the whole second at or after `at`. */
export function atExpression(at: number): string {
  return `at(${new Date(Math.ceil(at / 1_000) * 1_000).toISOString().slice(0, 19)})`;
}

export function parseWakeUp(body: string): ScheduleWakeUp | undefined {
  try {
    const value = JSON.parse(body) as unknown;
    const id = typeof value === 'object' && value !== null ? (value as Record<string, unknown>).scheduleId : undefined;
    return typeof id === 'string' && /^[0-9a-f-]{36}$/.test(id) ? { scheduleId: id } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Deletes a schedule's one-time schedule from the group: all that cancelling needs of the timer,
 * so the admin command line, which has the group's name and nothing else of the timer's settings,
 * can do it too.
 */
export class ScheduleDisarmer implements Pick<ScheduleTimer, 'disarm'> {
  constructor(
    private readonly scheduler: SchedulerClient,
    private readonly groupName: string,
  ) {}

  async disarm(scheduleId: string): Promise<void> {
    try {
      await this.scheduler.send(new DeleteScheduleCommand({ Name: scheduleName(scheduleId), GroupName: this.groupName }));
    } catch (error) {
      // Never made (a short delay went to the queue), or already run and deleted.
      if (!(error instanceof ResourceNotFoundException)) throw error;
    }
  }
}

export class AwsScheduleTimer implements ScheduleTimer {
  private readonly disarmer: ScheduleDisarmer;

  constructor(
    private readonly scheduler: SchedulerClient,
    private readonly sqs: SQSClient,
    private readonly config: SchedulerConfig,
    private readonly now: () => number = Date.now,
  ) {
    this.disarmer = new ScheduleDisarmer(scheduler, config.groupName);
  }

  async arm(scheduleId: string, at: number, attempt = 0): Promise<void> {
    const body = JSON.stringify({ scheduleId } satisfies ScheduleWakeUp);
    const delaySeconds = Math.max(0, Math.ceil((at - this.now()) / 1_000));
    if (delaySeconds <= MAX_QUEUE_DELAY_SECONDS) {
      await this.sqs.send(new SendMessageCommand({ QueueUrl: this.config.queueUrl, MessageBody: body, DelaySeconds: delaySeconds }));
      return;
    }
    const name = scheduleName(scheduleId, attempt);
    try {
      await this.scheduler.send(
        new CreateScheduleCommand({
          Name: name,
          GroupName: this.config.groupName,
          ScheduleExpression: atExpression(at),
          ScheduleExpressionTimezone: 'UTC',
          FlexibleTimeWindow: { Mode: 'OFF' },
          ActionAfterCompletion: 'DELETE',
          ClientToken: name,
          Target: {
            Arn: this.config.targetArn,
            RoleArn: this.config.roleArn,
            Input: body,
            RetryPolicy: DELIVERY_RETRY,
            DeadLetterConfig: { Arn: this.config.deadLetterArn },
          },
        }),
      );
    } catch (error) {
      // Already there: an earlier try of the same request made it.
      if (!(error instanceof ConflictException)) throw error;
    }
  }

  disarm(scheduleId: string): Promise<void> {
    return this.disarmer.disarm(scheduleId);
  }
}
