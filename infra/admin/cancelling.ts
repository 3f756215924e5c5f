/**
 * How the admin CLI cancels scheduled messages (`schedule cancel`, `key revoke`, `key rotate`
 * without --keep-schedules, `user delete`, `org delete --force`): through `cancelSchedule`
 * (functions/shared/schedules/key-schedules.ts), as the cancel endpoint does.
 *
 * Against a deployed table, given the stack's webhook queue and schedule group
 * (WEBHOOK_QUEUE_URL and SCHEDULE_GROUP_NAME: the stack outputs WebhookQueueUrl and
 * ScheduleGroupName, reachable with the OperatorPolicy), a cancelled schedule's one-time schedule
 * is deleted and its `email.cancelled` queued at once. Without them, and always against the local
 * stack (whose queue and timer live in its own process), the schedule is marked as owing its
 * notice and its timer tells it, once, at the schedule's time: late, but never lost.
 */
import type { RetireDependencies } from '../../functions/shared/schedules/key-schedules';
import type { ScheduleNotices } from '../../functions/shared/schedules/notices';
import { DynamoDbScheduleStore } from '../../functions/shared/schedules/schedule-store';
import type { ScheduleTimer } from '../../functions/shared/schedules/timer';
import { SettingsReader, fromEnv } from '../../functions/shared/runtime/settings-reader';
import { InvalidArgumentError } from '../../functions/shared/store/records';
import type { DynamoDbAdminStore } from './admin-store';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * When a schedule cancelled here has its `email.cancelled` told: 'none' when its Organization's
 * webhook is deleted with it (`org delete --force`), so there is nobody to tell.
 */
export type NoticeAt = 'now' | 'send time' | 'none';

export interface AdminCancelling extends RetireDependencies {
  readonly noticeAt: NoticeAt;
}

/** The deployed stack's parts a cancellation reaches to tell at once. */
export interface StackReach {
  readonly webhookQueueUrl: string;
  readonly scheduleGroupName: string;
}

/** Both settings, or undefined for neither; one without the other, or a queue URL that is not one, is refused. */
export function stackReachFrom(env: Env): StackReach | undefined {
  const read = new SettingsReader(fromEnv(env));
  const webhookQueueUrl = read.endpoint('WEBHOOK_QUEUE_URL');
  const scheduleGroupName = read.text('SCHEDULE_GROUP_NAME');
  // Half of it would delete timers without telling, or tell while the timer fires for nothing.
  if ((read.raw('WEBHOOK_QUEUE_URL') === undefined) !== (scheduleGroupName === undefined)) {
    read.problem('WEBHOOK_QUEUE_URL and SCHEDULE_GROUP_NAME (stack outputs WebhookQueueUrl and ScheduleGroupName) go together: set both, or neither');
  }
  read.finish((message) => new InvalidArgumentError(message));
  return webhookQueueUrl !== undefined && scheduleGroupName !== undefined ? { webhookQueueUrl, scheduleGroupName } : undefined;
}

/** The cancelling parts over the table, with the stack's timer and webhook queue when `reach` has them. */
export function adminCancelling(
  store: DynamoDbAdminStore,
  reach: { readonly timer: Pick<ScheduleTimer, 'disarm'>; readonly notices: ScheduleNotices } | undefined,
  warn: (line: string) => void,
): AdminCancelling {
  const schedules = new DynamoDbScheduleStore(store.client, store.tableName);
  return {
    schedules,
    organizations: schedules.organizations,
    timer: reach?.timer,
    notices: reach?.notices,
    now: Date.now,
    warn: (message, details) => warn(`${message} (scheduled message ${String(details.scheduleId)})`),
    noticeAt: reach ? 'now' : 'send time',
  };
}

/**
 * Cancelling that tells nobody and owes nothing, for an Organization whose webhook goes with it
 * (`org delete --force`): a notice queued now would find no webhook when delivered. Each notice is
 * settled all the same, so an Organization made again with the same id never hears of these, and
 * the timers the CLI can reach are deleted.
 */
export const untold = (cancelling: AdminCancelling): AdminCancelling => ({ ...cancelling, notices: { notify: async () => undefined }, noticeAt: 'none' });

/**
 * What a command that cancelled `count` schedules adds to its answer: `noticeAt` for --json, and
 * for a deployed table whose notices wait, the one line saying so and how to have them at once.
 */
export function noticeReport(count: number, cancelling: AdminCancelling, local: boolean): { human: string; json: { noticeAt?: NoticeAt } } {
  if (count === 0) return { human: '', json: {} };
  const human =
    cancelling.noticeAt === 'none'
      ? "\nNo email.cancelled webhook is sent for them: the Organization's webhook is deleted with it"
      : cancelling.noticeAt === 'send time' && !local
        ? `\nTheir email.cancelled webhooks go out at each message's send time; set WEBHOOK_QUEUE_URL and SCHEDULE_GROUP_NAME (stack outputs WebhookQueueUrl, ScheduleGroupName) to send them at once`
        : '';
  return { human, json: { noticeAt: cancelling.noticeAt } };
}
