/**
 * The scheduled send's part of the stack (CONTRACT section 13): the schedule group, the schedule
 * queue with its dead-letter queue and alarm, the scheduled-send function consuming the queue,
 * the cancel route and function, the scheduler's role, and exactly what each role may do: the
 * scheduler role only sends to the two queues, only the scheduler's role may be passed (to
 * EventBridge Scheduler only), and schedules are acted on in the stack's group only.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { EmailSendApiStack } from '../../infra/aws/stack';
import { buildStack, partitions, readKeyHoldersStatement, recordKeyUseStatement, synthesised } from './support';

type Json = Record<string, any>;

let parts: ReturnType<typeof synthesised>;
let stack: EmailSendApiStack;
let template: Template;
let resources: Record<string, Json>;
beforeAll(() => {
  parts = synthesised();
  ({ stack, template, resources } = parts);
});

const id = (_stack: Stack, construct: { node: { defaultChild?: unknown } }) => parts.id(construct);
const logicalIdOf = (path: string) => parts.logicalIdOf(path);
const arnOf = (path: string) => parts.arnOf(path);
const table = () => parts.table();
const groupName = () => stack.scheduledSend.group.scheduleGroupName;
const schedulesInGroup = () => ({
  'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':scheduler:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, `:schedule/${groupName()}/*`]],
});

function policyOf(role: string): Json[] {
  const policies = Object.values(template.findResources('AWS::IAM::Policy')).filter((p) => JSON.stringify(p.Properties.Roles) === JSON.stringify([{ Ref: logicalIdOf(role) }]));
  expect(policies).toHaveLength(1);
  return policies[0]!.Properties.PolicyDocument.Statement;
}
const bySid = (statements: Json[], sid: string) => statements.find((s) => s.Sid === sid);

const ARM = () => [
  { Sid: 'CreateSchedules', Effect: 'Allow', Action: 'scheduler:CreateSchedule', Resource: schedulesInGroup() },
  { Sid: 'PassSchedulerRole', Effect: 'Allow', Action: 'iam:PassRole', Resource: arnOf('SchedulerRole'), Condition: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } } },
  { Sid: 'QueueShortWaits', Effect: 'Allow', Action: 'sqs:SendMessage', Resource: arnOf('ScheduleQueue') },
];
const WEBHOOKS = () => [
  { Sid: 'ReadWebhooks', Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: table(), Condition: partitions('HOOK#*') },
  { Sid: 'QueueWebhooks', Effect: 'Allow', Action: 'sqs:SendMessage', Resource: arnOf('WebhookQueue') },
];

describe('schedules, queue and dead letters', () => {
  it('has one schedule group, which the functions are told of', () => {
    template.resourceCountIs('AWS::Scheduler::ScheduleGroup', 1);
    expect(groupName()).toMatch(/^EmailSendApi-ScheduleGroup-/);
    for (const fn of [stack.sendFunction, stack.scheduledSend.fire.fn, stack.scheduledSend.cancel.fn]) {
      expect(resources[id(stack, fn)]!.Properties.Environment.Variables).toMatchObject({
        SCHEDULE_GROUP_NAME: groupName(),
        SCHEDULE_TARGET_ARN: arnOf('ScheduleQueue'),
        SCHEDULER_ROLE_ARN: arnOf('SchedulerRole'),
        SCHEDULE_DEAD_LETTER_ARN: arnOf('ScheduleQueueDeadLetters'),
        SCHEDULE_QUEUE_URL: { Ref: logicalIdOf('ScheduleQueue') },
        WEBHOOK_QUEUE_URL: { Ref: logicalIdOf('WebhookQueue') },
      });
    }
    expect(template.toJSON().Outputs.ScheduleGroupName.Value).toBe(groupName());
    expect(JSON.stringify(template.toJSON().Outputs.CancelUrl.Value)).toContain('/v1.2/email/cancel');
  });

  it('queues wake-ups encrypted, with a dead-letter queue after ten failed attempts and six times the function\'s timeout of visibility', () => {
    expect(resources[logicalIdOf('ScheduleQueue')]!.Properties).toMatchObject({
      SqsManagedSseEnabled: true,
      VisibilityTimeout: 360,
      RedrivePolicy: { maxReceiveCount: 10, deadLetterTargetArn: arnOf('ScheduleQueueDeadLetters') },
    });
    expect(resources[logicalIdOf('ScheduleQueueDeadLetters')]!.Properties).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 3600 });
    expect(resources[id(stack, stack.scheduledSend.fire.fn)]!.Properties.Timeout).toBe(60);
  });

  it('consumes the queue with the scheduled-send function, partial batch failures and a concurrency cap', () => {
    const [mapping] = Object.values(template.findResources('AWS::Lambda::EventSourceMapping'))
      .map((m) => m.Properties)
      .filter((m) => JSON.stringify(m.EventSourceArn) === JSON.stringify(arnOf('ScheduleQueue')));
    expect(mapping).toMatchObject({ FunctionName: { Ref: id(stack, stack.scheduledSend.fire.fn) }, BatchSize: 10, FunctionResponseTypes: ['ReportBatchItemFailures'], ScalingConfig: { MaximumConcurrency: 20 } });
  });

  it('alarms on any message in the dead-letter queue', () => {
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties);
    const alarm = alarms.find((a) => JSON.stringify(a.Dimensions ?? []).includes(logicalIdOf('ScheduleQueueDeadLetters')));
    expect(alarm).toMatchObject({ MetricName: 'ApproximateNumberOfMessagesVisible', Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold', AlarmDescription: expect.stringContaining('could not be sent') });
  });
});

describe('the scheduler\'s role', () => {
  it('is assumable by EventBridge Scheduler for this account\'s schedule group only', () => {
    expect(resources[logicalIdOf('SchedulerRole')]!.Properties.AssumeRolePolicyDocument.Statement).toEqual([
      {
        Action: 'sts:AssumeRole',
        Effect: 'Allow',
        Principal: { Service: 'scheduler.amazonaws.com' },
        Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } }, ArnEquals: { 'aws:SourceArn': arnOf('ScheduleGroup') } },
      },
    ]);
  });

  it('may only send to the schedule queue and its dead-letter queue', () => {
    expect(policyOf('SchedulerRole')).toEqual([{ Sid: 'DeliverWakeUps', Effect: 'Allow', Action: 'sqs:SendMessage', Resource: [arnOf('ScheduleQueue'), arnOf('ScheduleQueueDeadLetters')] }]);
  });

  it('is the only role any function may pass, and only to EventBridge Scheduler, by the two functions that arm timers', () => {
    const passers = Object.values(template.findResources('AWS::IAM::Policy')).filter((p) => JSON.stringify(p).includes('iam:PassRole'));
    expect(passers.map((p) => p.Properties.Roles[0].Ref).sort()).toEqual([logicalIdOf('ScheduledSendFunctionRole'), logicalIdOf('SendFunctionRole')].sort());
    for (const policy of passers) {
      const statements = (policy.Properties.PolicyDocument.Statement as Json[]).filter((s) => JSON.stringify(s.Action).includes('iam:PassRole'));
      expect(statements).toEqual([ARM()[1]]);
    }
  });
});

describe('IAM of the functions (exact statements)', () => {
  it('send function: writes schedules in SCHED# only, arms timers, queues webhooks', () => {
    const statements = policyOf('SendFunctionRole');
    expect(bySid(statements, 'WriteSchedules')).toEqual({
      Sid: 'WriteSchedules',
      Effect: 'Allow',
      Action: ['dynamodb:BatchWriteItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem'],
      Resource: table(),
      Condition: partitions('SCHED#*'),
    });
    for (const statement of [...ARM(), ...WEBHOOKS()]) expect(bySid(statements, statement.Sid)).toEqual(statement);
    expect(JSON.stringify(statements)).not.toContain('scheduler:DeleteSchedule');
  });

  it('scheduled-send function: what sending takes (as the send function), its schedules, arming and webhooks; no idempotency records', () => {
    const statements = policyOf('ScheduledSendFunctionRole');
    const send = policyOf('SendFunctionRole');
    for (const sid of ['ReadAccessRecords', 'SendRateBudget', 'ReadSendQuota', 'SendEmail']) expect(bySid(statements, sid)).toEqual(bySid(send, sid));
    expect(bySid(statements, 'FireSchedules')).toEqual({ Sid: 'FireSchedules', Effect: 'Allow', Action: ['dynamodb:DeleteItem', 'dynamodb:Query', 'dynamodb:UpdateItem'], Resource: table(), Condition: partitions('SCHED#*') });
    // At its time the key that made the schedule must still be its user's (the key hash of a user item, nothing more).
    expect(bySid(statements, 'ReadKeyHolders')).toEqual(readKeyHoldersStatement(table()));
    for (const statement of [...ARM(), ...WEBHOOKS()]) expect(bySid(statements, statement.Sid)).toEqual(statement);
    expect(bySid(statements, 'IdempotencyRecords')).toBeUndefined();
    // The event source's own statement: receiving from the schedule queue, nothing else.
    expect(statements.find((s) => JSON.stringify(s.Action).includes('sqs:ReceiveMessage'))).toMatchObject({ Resource: arnOf('ScheduleQueue') });
    const label = (s: Json) => s.Sid ?? (JSON.stringify(s.Action).includes('xray:') ? 'x-ray' : 'consume');
    expect(statements.map(label).sort()).toEqual(
      ['WriteOwnLogs', 'ReadAccessRecords', 'ReadKeyHolders', 'SendRateBudget', 'ReadSendQuota', 'SendEmail', 'PauseOrganization', 'FireSchedules', 'CreateSchedules', 'PassSchedulerRole', 'QueueShortWaits', 'ReadWebhooks', 'QueueWebhooks', 'TestModeEvents', 'x-ray', 'consume'].sort(),
    );
  });

  it('cancel function: reads keys, Organizations and schedules, cancels in SCHED#, deletes schedules of the group, queues webhooks; nothing else', () => {
    const statements = policyOf('CancelFunctionRole').filter((s) => s.Sid !== 'WriteOwnLogs' && s.Sid !== undefined);
    expect(statements).toEqual([
      { Sid: 'ReadAccessAndSchedules', Effect: 'Allow', Action: 'dynamodb:BatchGetItem', Resource: table(), Condition: partitions('KEY#*', 'ORG#*', 'SCHED#*') },
      readKeyHoldersStatement(table()),
      recordKeyUseStatement(table()),
      { Sid: 'CancelSchedules', Effect: 'Allow', Action: ['dynamodb:DeleteItem', 'dynamodb:UpdateItem'], Resource: table(), Condition: partitions('SCHED#*') },
      { Sid: 'DeleteSchedules', Effect: 'Allow', Action: 'scheduler:DeleteSchedule', Resource: schedulesInGroup() },
      ...WEBHOOKS(),
    ]);
  });
});

describe('the cancel route', () => {
  it('sends POST /v1.2/email/cancel, with no authorizer (the function checks the API key), to the cancel function only', () => {
    const routes = Object.values(template.findResources('AWS::ApiGatewayV2::Route')).filter((r) => r.Properties.RouteKey === 'POST /v1.2/email/cancel');
    expect(routes).toHaveLength(1);
    expect(routes[0]!.Properties.AuthorizationType).toBe('NONE');
    const integrationId = routes[0]!.Properties.Target['Fn::Join'][1][1].Ref as string;
    expect(resources[integrationId]!.Properties).toMatchObject({ IntegrationType: 'AWS_PROXY', IntegrationUri: { 'Fn::GetAtt': [id(stack, stack.scheduledSend.cancel.fn), 'Arn'] } });
  });
});

describe("the operator's policy (the admin CLI's cancellations)", () => {
  const operatorStatements = (t: Template) => {
    const policies = Object.entries(t.findResources('AWS::IAM::ManagedPolicy')).filter(([logicalId]) => logicalId.startsWith('OperatorPolicy'));
    expect(policies).toHaveLength(1);
    return policies[0]![1].Properties.PolicyDocument.Statement as Json[];
  };
  const EXACT = () => [
    { Sid: 'DeleteSchedules', Effect: 'Allow', Action: 'scheduler:DeleteSchedule', Resource: schedulesInGroup() },
    { Sid: 'QueueWebhooks', Effect: 'Allow', Action: 'sqs:SendMessage', Resource: arnOf('WebhookQueue') },
  ];

  it('may only delete schedules of the group and queue webhooks; its ARN and the webhook queue are outputs', () => {
    expect(operatorStatements(template)).toEqual(EXACT());
    const outputs = template.toJSON().Outputs as Json;
    expect(outputs.OperatorPolicyArn.Value).toEqual({ Ref: logicalIdOf('OperatorPolicy') });
    expect(outputs.WebhookQueueUrl.Value).toEqual({ Ref: logicalIdOf('WebhookQueue') });
    // SQS-managed encryption: sending to the queue needs no KMS key, so the policy grants none.
    expect(resources[logicalIdOf('WebhookQueue')]!.Properties.SqsManagedSseEnabled).toBe(true);
  });

  it('exists with SES tenants off too, unchanged', () => {
    const { stack: off } = buildStack({ sesTenants: false });
    const offTemplate = Template.fromStack(off);
    const statements = operatorStatements(offTemplate);
    expect(statements.map((s) => [s.Sid, s.Action])).toEqual([['DeleteSchedules', 'scheduler:DeleteSchedule'], ['QueueWebhooks', 'sqs:SendMessage']]);
    expect(Object.keys(offTemplate.toJSON().Outputs as Json)).toEqual(expect.arrayContaining(['OperatorPolicyArn', 'WebhookQueueUrl', 'ScheduleGroupName']));
  });
});
