/**
 * Scheduled send in AWS (CONTRACT section 13), as a list of parts:
 *
 * - the schedules' group, where each scheduled message gets an EventBridge Scheduler one-time
 *   schedule (`at(...)`, UTC, deleted after it ran) made by the send function;
 * - the schedule queue every wake-up lands in (the schedules' target, and directly with
 *   `DelaySeconds` for times within 15 minutes), consumed by the scheduled-send function, which
 *   sends through the send function's own pipeline (functions/scheduled/fire.ts);
 * - one dead-letter queue for what could not be sent: schedules EventBridge Scheduler could not
 *   deliver after 24 hours of retries, and wake-ups the function failed on every attempt; an
 *   alarm on it;
 * - the scheduler's role, which may only send to those two queues, assumable by EventBridge
 *   Scheduler for this account's schedule group only; the functions may pass that role and no
 *   other (`iam:PassRole` to scheduler.amazonaws.com), and act on schedules in the group only;
 * - the cancel function behind `POST /v1.2/email/cancel`.
 *
 * The scheduled message itself is stored in the table (functions/shared/schedules/), so the
 * timer only carries its id.
 */
import { Aws, Duration } from 'aws-cdk-lib';
import type { Stack } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { ScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { API_ROUTES } from '../../functions/shared/http/api-routes';
import { DELIVERY_PARTITIONS as D, SEND_FUNCTION_PARTITIONS as P, SCHEDULE_PARTITION } from '../../functions/shared/store/table';
import type { AlarmRow } from './alarms';
import type { ConfigurationSets } from './configuration-sets';
import { queueWithDeadLetters } from './delivery-lifecycle';
import { sendingStatements } from './send-function';
import type { SendFunction } from './send-function';
import { CANCEL_ENTRY, SCHEDULED_ENTRY } from './send-bundle';
import type { ServiceFunction } from './service-function';
import { addServiceFunction, inPartitions, readKeyHolders, recordKeyUse } from './service-function';
import type { StackSettings } from './settings';

/** The scheduled-send function's timeout; sending gets all of it but a few seconds to record the outcome. */
const FIRE_TIMEOUT = Duration.seconds(60);
/** SQS's advice for a Lambda event source: at least six times the function's timeout. */
const FIRE_VISIBILITY = Duration.seconds(360);
/** Wake-ups tried this often before they go to the dead-letter queue (each a storage fault or crash, not throttling: that re-arms). */
const FIRE_ATTEMPTS = 10;
/** Scheduled messages fired at once at most: they queue behind each other beyond it (SES's rate is the real limit, and pacing spends it). */
const FIRE_MAX_CONCURRENCY = 20;

/** The scheduled-send function's service name: it sends as the send function does, so it may pause an Organization too. */
export const SCHEDULED_SERVICE_NAME = 'email-send-api-scheduled';

export interface ScheduledSend {
  readonly fire: ServiceFunction;
  readonly cancel: ServiceFunction;
  readonly group: ScheduleGroup;
  /** The ARNs of the group's schedules (`schedule/<group>/*`): the one resource every schedule action here takes. */
  readonly schedulesArn: string;
  readonly queue: Queue;
  readonly deadLetters: Queue;
  readonly schedulerRole: Role;
  readonly alarms: AlarmRow[];
  /** What another function that cancels schedules needs (the settings API): disarm their timers, queue their webhooks. */
  readonly cancelling: Cancelling;
}

export interface Cancelling {
  /** The settings the scheduling parts read (functions/shared/schedules/dependencies.ts). */
  readonly environment: Readonly<Record<string, string>>;
  readonly statements: PolicyStatement[];
}

export function addScheduledSend(stack: Stack, table: Table, configurationSets: ConfigurationSets, settings: StackSettings, send: SendFunction, webhookQueue: Queue): ScheduledSend {
  const { queue, dead } = queueWithDeadLetters(stack, 'ScheduleQueue', FIRE_ATTEMPTS, FIRE_VISIBILITY);
  const group = new ScheduleGroup(stack, 'ScheduleGroup', {});
  const schedulesInGroup = stack.formatArn({ service: 'scheduler', resource: 'schedule', resourceName: `${group.scheduleGroupName}/*` });

  const schedulerRole = new Role(stack, 'SchedulerRole', {
    description: 'EventBridge Scheduler: deliver scheduled messages\' wake-ups to the schedule queue, or to its dead-letter queue',
    // Only schedules of this account's group may assume it (the confused-deputy conditions AWS documents).
    assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
      conditions: { StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID }, ArnEquals: { 'aws:SourceArn': group.scheduleGroupArn } },
    }),
  });
  schedulerRole.addToPolicy(new PolicyStatement({ sid: 'DeliverWakeUps', actions: ['sqs:SendMessage'], resources: [queue.queueArn, dead.queueArn] }));

  // What a function needs to arm a timer: make a schedule in the group with that role, or queue a short delay.
  const armStatements = [
    new PolicyStatement({ sid: 'CreateSchedules', actions: ['scheduler:CreateSchedule'], resources: [schedulesInGroup] }),
    new PolicyStatement({
      sid: 'PassSchedulerRole',
      actions: ['iam:PassRole'],
      resources: [schedulerRole.roleArn],
      conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
    }),
    new PolicyStatement({ sid: 'QueueShortWaits', actions: ['sqs:SendMessage'], resources: [queue.queueArn] }),
  ];
  const webhookStatements = [
    new PolicyStatement({ sid: 'ReadWebhooks', actions: ['dynamodb:GetItem'], resources: [table.tableArn], conditions: inPartitions(D.webhook) }),
    new PolicyStatement({ sid: 'QueueWebhooks', actions: ['sqs:SendMessage'], resources: [webhookQueue.queueArn] }),
  ];
  const environment: Record<string, string> = {
    SCHEDULE_GROUP_NAME: group.scheduleGroupName,
    SCHEDULE_TARGET_ARN: queue.queueArn,
    SCHEDULER_ROLE_ARN: schedulerRole.roleArn,
    SCHEDULE_DEAD_LETTER_ARN: dead.queueArn,
    SCHEDULE_QUEUE_URL: queue.queueUrl,
    WEBHOOK_QUEUE_URL: webhookQueue.queueUrl,
  };

  // The send function schedules: it writes the schedule (parts first, then the head), arms its
  // timer, and takes the record back if the timer cannot be armed.
  for (const [name, value] of Object.entries(environment)) send.fn.addEnvironment(name, value);
  for (const statement of [
    new PolicyStatement({
      sid: 'WriteSchedules',
      // UpdateItem and DeleteItem: the Organization's count of pending schedules and their entries (organization-schedules.ts).
      actions: ['dynamodb:PutItem', 'dynamodb:BatchWriteItem', 'dynamodb:Query', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
      resources: [table.tableArn],
      conditions: inPartitions(SCHEDULE_PARTITION),
    }),
    ...armStatements,
    ...webhookStatements,
  ]) {
    send.role.addToPolicy(statement);
  }

  // A cancelled schedule's timer is deleted (a short wait already queued finds it Cancelled) and its webhook queued.
  const cancelStatements = [new PolicyStatement({ sid: 'DeleteSchedules', actions: ['scheduler:DeleteSchedule'], resources: [schedulesInGroup] }), ...webhookStatements];
  const baseEnvironment = { TABLE_NAME: table.tableName, ...settings.serviceEnvironment, ...environment };
  const fire = addServiceFunction(stack, 'ScheduledSendFunction', settings, {
    entry: SCHEDULED_ENTRY,
    roleDescription: 'Scheduled-send function: read and move on scheduled messages, send them as the send function does, re-arm their timers, queue their webhooks, write its own logs',
    serviceName: SCHEDULED_SERVICE_NAME,
    description: 'Scheduled messages at their time: re-check, then send through the send pipeline',
    timeout: FIRE_TIMEOUT,
    memorySize: settings.functionMemoryMb,
    environment: { ...baseEnvironment, SES_CONFIGURATION_SET: configurationSets.base.configurationSetName },
    statements: [
      ...sendingStatements(stack, table, configurationSets, settings),
      // A schedule dies with its key (CONTRACT section 13 item 5): at its time its key must still be its user's.
      readKeyHolders(table),
      new PolicyStatement({ sid: 'FireSchedules', actions: ['dynamodb:Query', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'], resources: [table.tableArn], conditions: inPartitions(SCHEDULE_PARTITION) }),
      ...armStatements,
      ...webhookStatements,
    ],
  });
  fire.fn.addEventSource(new SqsEventSource(queue, { batchSize: 10, reportBatchItemFailures: true, maxConcurrency: FIRE_MAX_CONCURRENCY }));

  const cancel = addServiceFunction(stack, 'CancelFunction', settings, {
    entry: CANCEL_ENTRY,
    roleDescription: 'Cancel function: read access records, cancel scheduled messages, delete their schedules, queue their webhooks, write its own logs',
    serviceName: 'email-send-api-cancel',
    description: `POST ${API_ROUTES.cancel.path}: cancel scheduled messages`,
    timeout: Duration.seconds(10),
    memorySize: 512,
    environment: baseEnvironment,
    statements: [
      new PolicyStatement({
        sid: 'ReadAccessAndSchedules',
        actions: ['dynamodb:BatchGetItem'],
        resources: [table.tableArn],
        conditions: inPartitions(P.apiKey, P.organization, SCHEDULE_PARTITION),
      }),
      // A key counts only while its user holds it (security audit round 2, finding 1).
      readKeyHolders(table),
      recordKeyUse(table),
      new PolicyStatement({ sid: 'CancelSchedules', actions: ['dynamodb:UpdateItem', 'dynamodb:DeleteItem'], resources: [table.tableArn], conditions: inPartitions(SCHEDULE_PARTITION) }),
      ...cancelStatements,
    ],
  });

  const alarms: AlarmRow[] = [
    {
      id: 'ScheduledSendDeadLetterAlarm',
      description: 'Scheduled messages that could not be sent: schedules EventBridge Scheduler could not deliver, or wake-ups the scheduled-send function failed on every attempt',
      metric: dead.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: 'Maximum' }),
      threshold: 1,
      atOrAbove: true,
      evaluationPeriods: 1,
    },
  ];
  return { fire, cancel, group, schedulesArn: schedulesInGroup, queue, deadLetters: dead, schedulerRole, alarms, cancelling: { environment, statements: cancelStatements } };
}
