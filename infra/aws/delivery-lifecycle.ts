/**
 * The delivery lifecycle in AWS (CONTRACT section 10), as a list of parts:
 *
 * - the configuration sets publish their events to the default EventBridge bus (the tracked ones
 *   their opens and clicks too); a rule matching these four sets' events sends them to an SQS
 *   queue (with a dead-letter queue), which the events function consumes with partial batch
 *   failures;
 * - webhook deliveries wait in a second queue (with a dead-letter queue after the last of eight
 *   attempts over about 27.5 hours), consumed by the webhook function; a KMS key seals the
 *   signing secrets;
 * - the status function behind `POST /v1.2/email/status`.
 *
 * Every function has its own role: exactly its actions, on the table's partitions it uses only.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { Stack } from 'aws-cdk-lib';
import { Metric } from 'aws-cdk-lib/aws-cloudwatch';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { EventBus, Rule } from 'aws-cdk-lib/aws-events';
import { SqsQueue } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { EmailSendingEvent, EventDestination } from 'aws-cdk-lib/aws-ses';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { EVENTBRIDGE_DETAIL_TYPES } from '../../functions/shared/delivery/ses-event';
import { ACTIVITY_PARTITIONS, DELIVERY_PARTITIONS as D, PAUSE_ATTRIBUTES, SEND_FUNCTION_PARTITIONS as P, SCHEDULE_PARTITION, SUPPRESSION_COUNT_ATTRIBUTE, TABLE_SCHEMA } from '../../functions/shared/store/table';
import { MAX_ATTEMPTS } from '../../functions/webhooks/deliver';
import type { AlarmRow } from './alarms';
import type { ConfigurationSets } from './configuration-sets';
import { allConfigurationSets, trackingEvents } from './configuration-sets';
import type { ServiceFunction } from './service-function';
import { EVENTS_ENTRY, STATUS_ENTRY, WEBHOOKS_ENTRY } from './send-bundle';
import { addServiceFunction, inPartitions, readKeyHolders, recordKeyUse } from './service-function';
import type { StackSettings } from './settings';

/** Alarm before SES's own review thresholds (5 % bounces, 0.1 % complaints): at half of each. */
export const BOUNCE_RATE_ALARM = 0.025;
export const COMPLAINT_RATE_ALARM = 0.0005;
const FUNCTION_TIMEOUT = Duration.seconds(30);
/** The events function's POWERTOOLS_SERVICE_NAME: its metrics' `service` dimension. */
export const EVENTS_SERVICE_NAME = 'email-send-api-events';
/** SQS's advice for a Lambda event source: at least six times the function's timeout. */
const VISIBILITY = Duration.seconds(180);

export interface DeliveryLifecycle {
  readonly events: ServiceFunction;
  readonly webhooks: ServiceFunction;
  readonly status: ServiceFunction;
  readonly webhookKey: Key;
  /** Where webhook deliveries wait; scheduled sends queue their own events on it too. */
  readonly webhookQueue: Queue;
  /** Where SES's events wait for the events function; test mode's simulated events too. */
  readonly eventsQueue: Queue;
  readonly eventsDeadLetters: Queue;
  readonly webhookDeadLetters: Queue;
  readonly alarms: AlarmRow[];
}

export function queueWithDeadLetters(stack: Stack, id: string, maxReceiveCount: number, visibilityTimeout: Duration = VISIBILITY): { queue: Queue; dead: Queue } {
  const secure = { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true };
  const dead = new Queue(stack, `${id}DeadLetters`, { ...secure, retentionPeriod: Duration.days(14) });
  const queue = new Queue(stack, id, { ...secure, visibilityTimeout, retentionPeriod: Duration.days(4), deadLetterQueue: { queue: dead, maxReceiveCount } });
  return { queue, dead };
}

/**
 * At most this many webhook function instances at once (the event source's maximum concurrency).
 * Each attempt may wait up to 5 s on a slow endpoint, and a dead endpoint's retries pile up, so
 * without a cap webhook deliveries could take the account's Lambda concurrency from the send
 * function (security audit round 2, finding 7). Messages beyond it wait in the queue; 5 instances
 * of batches of 10 still deliver hundreds of events a second to healthy endpoints.
 */
export const WEBHOOK_MAX_CONCURRENCY = 5;

/** What every configuration set publishes; a tracked set adds OPEN and CLICK as it tracks them. */
const DELIVERY_EVENTS = [
  EmailSendingEvent.SEND,
  EmailSendingEvent.DELIVERY,
  EmailSendingEvent.BOUNCE,
  EmailSendingEvent.COMPLAINT,
  EmailSendingEvent.REJECT,
  EmailSendingEvent.DELIVERY_DELAY,
  EmailSendingEvent.RENDERING_FAILURE,
];

export function addDeliveryLifecycle(stack: Stack, table: Table, configurationSets: ConfigurationSets, settings: StackSettings): DeliveryLifecycle {
  const configurationSet = configurationSets.base;
  const events = queueWithDeadLetters(stack, 'SesEventsQueue', 5);
  const hooks = queueWithDeadLetters(stack, 'WebhookQueue', MAX_ATTEMPTS);

  // SES publishes to the default bus only; the rule takes the service's configuration sets' events off it.
  // An SES event destination is what turns tracking on: a set tracks opens or clicks exactly when
  // its destination publishes OPEN or CLICK, which the base set's never does.
  const destination = EventDestination.eventBus(EventBus.fromEventBusName(stack, 'DefaultEventBus', 'default'));
  configurationSet.addEventDestination('EventBridgeDestination', { destination, events: DELIVERY_EVENTS });
  for (const { set, tracking } of configurationSets.tracked) {
    set.addEventDestination('EventBridgeDestination', { destination, events: [...DELIVERY_EVENTS, ...trackingEvents(tracking)] });
  }
  new Rule(stack, 'SesEventsRule', {
    description: 'Delivery, open and click events of the service\'s SES configuration sets, to the events queue',
    eventPattern: {
      source: ['aws.ses'],
      detailType: Object.values(EVENTBRIDGE_DETAIL_TYPES),
      detail: { mail: { tags: { 'ses:configuration-set': allConfigurationSets(configurationSets).map((set) => set.configurationSetName) } } },
    },
    targets: [new SqsQueue(events.queue)],
  });

  const webhookKey = new Key(stack, 'WebhookSecretsKey', {
    description: 'Seals the webhook signing secrets stored in the table and, bound to their user, the API keys the settings page shows again',
    enableKeyRotation: true,
    // The table outlives the stack, and its sealed secrets are useless without this key.
    removalPolicy: RemovalPolicy.RETAIN,
  });

  // Every setting the functions read (functions/shared/runtime/config.ts), as the send function gets them.
  const lifecycleEnvironment = { TABLE_NAME: table.tableName, ...settings.serviceEnvironment };
  const eventsFunction = addServiceFunction(stack, 'EventsFunction', settings, {
    entry: EVENTS_ENTRY,
    roleDescription: 'Events function: record delivery states, suppressions and reputation counters, pause Organizations, queue webhooks, write its own logs',
    serviceName: EVENTS_SERVICE_NAME,
    description: 'SES delivery events: record states, suppress, queue webhooks',
    timeout: FUNCTION_TIMEOUT,
    memorySize: 512,
    environment: { ...lifecycleEnvironment, WEBHOOK_QUEUE_URL: hooks.queue.queueUrl },
    statements: [
      new PolicyStatement({ sid: 'DeliveryStates', actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'], resources: [table.tableArn], conditions: inPartitions(D.message) }),
      new PolicyStatement({ sid: 'SuppressionList', actions: ['dynamodb:PutItem'], resources: [table.tableArn], conditions: inPartitions(D.suppression) }),
      new PolicyStatement({
        sid: 'SuppressionCountAndPause',
        // Only the suppression count and the pause on the Organization item: not its members, senders or name.
        actions: ['dynamodb:UpdateItem'],
        resources: [table.tableArn],
        conditions: {
          ...inPartitions(P.organization),
          'ForAllValues:StringEquals': {
            'dynamodb:Attributes': [TABLE_SCHEMA.partitionKey, TABLE_SCHEMA.sortKey, SUPPRESSION_COUNT_ATTRIBUTE, PAUSE_ATTRIBUTES.at, PAUSE_ATTRIBUTES.reason],
          },
          StringEqualsIfExists: { 'dynamodb:ReturnValues': ['NONE'] },
        },
      }),
      // The Organization's reputation counters: one ADD per counted event, answering the whole item to judge from.
      new PolicyStatement({ sid: 'ReputationCounters', actions: ['dynamodb:UpdateItem'], resources: [table.tableArn], conditions: inPartitions(D.reputation) }),
      new PolicyStatement({ sid: 'ReadWebhooks', actions: ['dynamodb:GetItem'], resources: [table.tableArn], conditions: inPartitions(D.webhook) }),
      new PolicyStatement({ sid: 'QueueWebhooks', actions: ['sqs:SendMessage'], resources: [hooks.queue.queueArn] }),
      // The settings page's Activity rows (functions/events/record-activity.ts): the message's
      // recorded states read back, then its rows written.
      new PolicyStatement({ sid: 'ActivityReadsStates', actions: ['dynamodb:BatchGetItem'], resources: [table.tableArn], conditions: inPartitions(D.message) }),
      new PolicyStatement({
        sid: 'ActivityRows',
        actions: ['dynamodb:UpdateItem'],
        resources: [table.tableArn],
        conditions: inPartitions(ACTIVITY_PARTITIONS.organization, ACTIVITY_PARTITIONS.recipient),
      }),
    ],
  });
  eventsFunction.fn.addEventSource(new SqsEventSource(events.queue, { batchSize: 10, reportBatchItemFailures: true }));

  const webhookFunction = addServiceFunction(stack, 'WebhookFunction', settings, {
    entry: WEBHOOKS_ENTRY,
    roleDescription: 'Webhook function: read webhook settings, open their secrets, write its own logs',
    serviceName: 'email-send-api-webhooks',
    description: 'Webhook deliveries: sign (Standard Webhooks), POST, back off',
    timeout: FUNCTION_TIMEOUT,
    memorySize: 256,
    environment: { ...lifecycleEnvironment, WEBHOOK_QUEUE_URL: hooks.queue.queueUrl, WEBHOOK_KMS_KEY_ID: webhookKey.keyArn },
    statements: [
      new PolicyStatement({ sid: 'ReadWebhooks', actions: ['dynamodb:GetItem'], resources: [table.tableArn], conditions: inPartitions(D.webhook) }),
      // Secrets bound to an Organization only: the same key seals API keys, bound to a user, which this role must not open.
      new PolicyStatement({
        sid: 'OpenWebhookSecrets',
        actions: ['kms:Decrypt'],
        resources: [webhookKey.keyArn],
        conditions: { 'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['organizationId'] }, Null: { 'kms:EncryptionContext:organizationId': 'false' } },
      }),
    ],
  });
  webhookFunction.fn.addEventSource(new SqsEventSource(hooks.queue, { batchSize: 10, reportBatchItemFailures: true, maxConcurrency: WEBHOOK_MAX_CONCURRENCY }));

  const statusFunction = addServiceFunction(stack, 'StatusFunction', settings, {
    entry: STATUS_ENTRY,
    roleDescription: 'Status function: read access records and delivery states, write its own logs',
    serviceName: 'email-send-api-status',
    description: 'POST /v1.2/email/status: recorded delivery states of an Organization\'s messages',
    timeout: Duration.seconds(10),
    memorySize: 512,
    environment: lifecycleEnvironment,
    statements: [
      new PolicyStatement({
        sid: 'ReadAccessAndStates',
        // Scheduled messages' heads too: their ids are answered as well (CONTRACT section 13).
        actions: ['dynamodb:BatchGetItem'],
        resources: [table.tableArn],
        conditions: inPartitions(P.apiKey, P.organization, D.message, SCHEDULE_PARTITION),
      }),
      readKeyHolders(table),
      recordKeyUse(table),
    ],
  });

  // The account's rates, not one set's: the service's mail is spread over four configuration sets
  // (tracked and untracked), and SES reviews and pauses the account as a whole.
  const reputation = (metricName: string) => new Metric({ namespace: 'AWS/SES', metricName, period: Duration.hours(1), statistic: 'Average' });
  const waiting = (queue: Queue) => queue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: 'Maximum' });
  const alarms: AlarmRow[] = [
    { id: 'BounceRateAlarm', description: `SES bounce rate of the account at ${BOUNCE_RATE_ALARM * 100}% (SES reviews an account at 5%)`, metric: reputation('Reputation.BounceRate'), threshold: BOUNCE_RATE_ALARM, atOrAbove: true, evaluationPeriods: 1 },
    { id: 'ComplaintRateAlarm', description: `SES complaint rate of the account at ${COMPLAINT_RATE_ALARM * 100}% (SES reviews an account at 0.1%)`, metric: reputation('Reputation.ComplaintRate'), threshold: COMPLAINT_RATE_ALARM, atOrAbove: true, evaluationPeriods: 1 },
    { id: 'SesEventsDeadLetterAlarm', description: 'SES delivery events the events function could not record wait in the dead-letter queue', metric: waiting(events.dead), threshold: 1, atOrAbove: true, evaluationPeriods: 1 },
    { id: 'WebhookDeadLetterAlarm', description: 'Webhook deliveries that failed every attempt wait in the dead-letter queue', metric: waiting(hooks.dead), threshold: 1, atOrAbove: true, evaluationPeriods: 1 },
  ];
  return { events: eventsFunction, webhooks: webhookFunction, status: statusFunction, webhookKey, webhookQueue: hooks.queue, eventsQueue: events.queue, eventsDeadLetters: events.dead, webhookDeadLetters: hooks.dead, alarms };
}
