/**
 * The delivery lifecycle's part of the stack: the SES event destination and rule, the queues and
 * their dead-letter queues, the KMS key, the event sources with partial batch failures, the
 * alarms on SES reputation, and, exactly, what each new function's role may do.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { MAX_ATTEMPTS } from '../../functions/webhooks/deliver';
import type { EmailSendApiStack } from '../../infra/aws/stack';
import { WEBHOOK_MAX_CONCURRENCY } from '../../infra/aws/delivery-lifecycle';
import { buildStack, configurationSetArns, partitions, readKeyHoldersStatement, recordKeyUseStatement, synthesised } from './support';

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
const table = () => parts.table();
const xRay = { Effect: 'Allow', Action: ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'], Resource: '*' };
const logs = (fn: string) => ({ Sid: 'WriteOwnLogs', Effect: 'Allow', Action: ['logs:CreateLogStream', 'logs:PutLogEvents'], Resource: { 'Fn::GetAtt': [`${fn}Logs${logicalIdOf(`${fn}Logs`).slice(`${fn}Logs`.length)}`, 'Arn'] } });
const consume = (queue: string) => ({
  Effect: 'Allow',
  Action: ['sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage'],
  Resource: { 'Fn::GetAtt': [logicalIdOf(queue), 'Arn'] },
});

function policyOf(role: string): Json[] {
  const policies = Object.values(template.findResources('AWS::IAM::Policy')).filter((p) => JSON.stringify(p.Properties.Roles) === JSON.stringify([{ Ref: logicalIdOf(role) }]));
  expect(policies).toHaveLength(1);
  return policies[0]!.Properties.PolicyDocument.Statement;
}

describe('the status route', () => {
  it('sends POST /v1.2/email/status, with no authorizer (the function checks the API key), to the status function only', () => {
    const routes = Object.values(template.findResources('AWS::ApiGatewayV2::Route')).filter((r) => r.Properties.RouteKey === 'POST /v1.2/email/status');
    expect(routes).toHaveLength(1);
    expect(routes[0]!.Properties.AuthorizationType).toBe('NONE');
    const integrationId = routes[0]!.Properties.Target['Fn::Join'][1][1].Ref as string;
    expect(resources[integrationId]!.Properties).toMatchObject({ IntegrationType: 'AWS_PROXY', PayloadFormatVersion: '2.0', IntegrationUri: { 'Fn::GetAtt': [id(stack, stack.lifecycle.status.fn), 'Arn'] } });
  });
});

describe('IAM of the delivery lifecycle functions (exact statements)', () => {
  it('status function: its logs, and BatchGetItem on key, Organization and message-state items only', () => {
    expect(policyOf('StatusFunctionRole')).toEqual([
      logs('StatusFunction'),
      { Sid: 'ReadAccessAndStates', Effect: 'Allow', Action: 'dynamodb:BatchGetItem', Resource: table(), Condition: partitions('KEY#*', 'ORG#*', 'MSG#*', 'SCHED#*') },
      readKeyHoldersStatement(table()),
      recordKeyUseStatement(table()),
      xRay,
    ]);
  });

  it('events function: message states, suppression items, only the count and the pause on Organization items, reputation counters, webhook configs (read), sending to the webhook queue, the Activity rows, consuming the events queue', () => {
    expect(policyOf('EventsFunctionRole')).toEqual([
      logs('EventsFunction'),
      { Sid: 'DeliveryStates', Effect: 'Allow', Action: ['dynamodb:GetItem', 'dynamodb:UpdateItem'], Resource: table(), Condition: partitions('MSG#*') },
      { Sid: 'SuppressionList', Effect: 'Allow', Action: 'dynamodb:PutItem', Resource: table(), Condition: partitions('SUPP#*') },
      {
        Sid: 'SuppressionCountAndPause',
        Effect: 'Allow',
        Action: 'dynamodb:UpdateItem',
        Resource: table(),
        Condition: {
          ...partitions('ORG#*'),
          'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['pk', 'sk', 'suppressions', 'pausedAt', 'pausedReason'] },
          StringEqualsIfExists: { 'dynamodb:ReturnValues': ['NONE'] },
        },
      },
      { Sid: 'ReputationCounters', Effect: 'Allow', Action: 'dynamodb:UpdateItem', Resource: table(), Condition: partitions('REP#*') },
      { Sid: 'ReadWebhooks', Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: table(), Condition: partitions('HOOK#*') },
      { Sid: 'QueueWebhooks', Effect: 'Allow', Action: 'sqs:SendMessage', Resource: { 'Fn::GetAtt': [logicalIdOf('WebhookQueue'), 'Arn'] } },
      { Sid: 'ActivityReadsStates', Effect: 'Allow', Action: 'dynamodb:BatchGetItem', Resource: table(), Condition: partitions('MSG#*') },
      { Sid: 'ActivityRows', Effect: 'Allow', Action: 'dynamodb:UpdateItem', Resource: table(), Condition: partitions('ACT#*', 'ACTR#*') },
      xRay,
      // Added by the event source, after the function (and its tracing) exist.
      consume('SesEventsQueue'),
    ]);
  });

  it('webhook function: webhook configs (read), Decrypt with the stack\'s key of Organization-bound secrets only, consuming the webhook queue', () => {
    expect(policyOf('WebhookFunctionRole')).toEqual([
      logs('WebhookFunction'),
      { Sid: 'ReadWebhooks', Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: table(), Condition: partitions('HOOK#*') },
      {
        Sid: 'OpenWebhookSecrets',
        Effect: 'Allow',
        Action: 'kms:Decrypt',
        Resource: { 'Fn::GetAtt': [logicalIdOf('WebhookSecretsKey'), 'Arn'] },
        // Not an API key sealed for a user (the settings API's alone).
        Condition: { 'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['organizationId'] }, Null: { 'kms:EncryptionContext:organizationId': 'false' } },
      },
      xRay,
      consume('WebhookQueue'),
    ]);
  });
});

describe('events, queues and key', () => {
  it('turns on SES suppression for bounces and complaints on the configuration set, and publishes its events to the default bus', () => {
    template.hasResourceProperties('AWS::SES::ConfigurationSet', { SuppressionOptions: { SuppressedReasons: ['BOUNCE', 'COMPLAINT'] } });
    template.hasResourceProperties('AWS::SES::ConfigurationSetEventDestination', {
      EventDestination: Match.objectLike({
        Enabled: true,
        MatchingEventTypes: ['send', 'delivery', 'bounce', 'complaint', 'reject', 'deliveryDelay', 'renderingFailure'],
        EventBridgeDestination: { EventBusArn: Match.anyValue() },
      }),
    });
  });

  it('routes exactly the event types of SES events it records, of the four configuration sets, to the events queue', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.ses'],
        'detail-type': ['Email Sent', 'Email Delivered', 'Email Bounced', 'Email Complaint Received', 'Email Rejected', 'Email Delivery Delayed', 'Email Rendering Failed', 'Email Opened', 'Email Clicked'],
        detail: { mail: { tags: { 'ses:configuration-set': [stack.configurationSet, ...stack.trackedConfigurationSets.map(({ set }) => set)].map((set) => ({ Ref: id(stack, set) })) } } },
      },
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [logicalIdOf('SesEventsQueue'), 'Arn'] } })],
    });
  });

  it('gives both queues a dead-letter queue, encryption and TLS; webhook messages get every attempt and outlive 24 hours of retries', () => {
    const webhookQueue = resources[logicalIdOf('WebhookQueue')]!.Properties;
    expect(webhookQueue).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 4 * 24 * 3600, RedrivePolicy: { maxReceiveCount: MAX_ATTEMPTS } });
    expect(resources[logicalIdOf('SesEventsQueue')]!.Properties).toMatchObject({ SqsManagedSseEnabled: true, RedrivePolicy: { maxReceiveCount: 5 } });
    // And the scheduled send's queue and its dead-letter queue (test/infra/scheduled-send.test.ts).
    template.resourceCountIs('AWS::SQS::Queue', 6);
    expect(Object.values(template.findResources('AWS::SQS::QueuePolicy')).every((p) => JSON.stringify(p).includes('aws:SecureTransport'))).toBe(true);
  });

  it('consumes both queues with partial batch failures', () => {
    const mappings = Object.values(template.findResources('AWS::Lambda::EventSourceMapping')).map((m) => m.Properties);
    // The third is the schedule queue's (test/infra/scheduled-send.test.ts).
    expect(mappings).toHaveLength(3);
    for (const mapping of mappings) expect(mapping).toMatchObject({ BatchSize: 10, FunctionResponseTypes: ['ReportBatchItemFailures'] });
  });

  it('caps the webhook consumer\'s concurrency, so retries of dead endpoints cannot crowd the account\'s Lambda concurrency (security audit round 2, finding 7)', () => {
    const mappings = Object.values(template.findResources('AWS::Lambda::EventSourceMapping')).map((m) => m.Properties);
    const webhooks = mappings.find((m) => JSON.stringify(m.EventSourceArn).includes(logicalIdOf('WebhookQueue')));
    expect(webhooks?.ScalingConfig).toEqual({ MaximumConcurrency: WEBHOOK_MAX_CONCURRENCY });
    expect(WEBHOOK_MAX_CONCURRENCY).toBeGreaterThanOrEqual(2);
    expect(WEBHOOK_MAX_CONCURRENCY).toBeLessThanOrEqual(10);
  });

  it('seals webhook secrets with a rotating key the stack keeps, named to the functions and the outputs', () => {
    template.hasResource('AWS::KMS::Key', { DeletionPolicy: 'Retain', Properties: Match.objectLike({ EnableKeyRotation: true }) });
    const env = resources[id(stack, stack.lifecycle.webhooks.fn)]!.Properties.Environment.Variables;
    expect(env).toMatchObject({ WEBHOOK_KMS_KEY_ID: { 'Fn::GetAtt': [logicalIdOf('WebhookSecretsKey'), 'Arn'] }, WEBHOOK_QUEUE_URL: { Ref: logicalIdOf('WebhookQueue') } });
    expect(resources[id(stack, stack.lifecycle.events.fn)]!.Properties.Environment.Variables).toMatchObject({ WEBHOOK_QUEUE_URL: { Ref: logicalIdOf('WebhookQueue') } });
    const outputs = template.toJSON().Outputs;
    expect(outputs.WebhookKeyArn.Value).toEqual({ 'Fn::GetAtt': [logicalIdOf('WebhookSecretsKey'), 'Arn'] });
    expect(JSON.stringify(outputs.StatusUrl.Value)).toContain('/v1.2/email/status');
  });

  it('passes the retention from context to the events function', () => {
    const events = Template.fromStack(buildStack({ statusRetentionDays: '90' }).stack);
    events.hasResourceProperties('AWS::Lambda::Function', { Description: Match.stringLikeRegexp('^SES delivery events'), Environment: { Variables: Match.objectLike({ STATUS_RETENTION_DAYS: '90' }) } });
    expect(() => buildStack({ statusRetentionDays: 0 })).toThrow(/STATUS_RETENTION_DAYS/);
  });
});

describe('alarms that protect the account', () => {
  const alarm = (metric: string) => Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties).find((a) => a.MetricName === metric);

  it.each([
    ['Reputation.BounceRate', 0.025],
    ['Reputation.ComplaintRate', 0.0005],
  ])('%s of the account (all four configuration sets\' mail, as SES reviews it), at half of SES\'s review threshold', (metric, threshold) => {
    expect(alarm(metric)).toMatchObject({
      Namespace: 'AWS/SES',
      Threshold: threshold,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    // One set's rate would miss tracked mail's bounces, or untracked mail's.
    expect(alarm(metric)!.Dimensions).toBeUndefined();
  });

  it('fires on any message in either dead-letter queue (and the scheduled send\'s)', () => {
    const dlq = Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties).filter((a) => a.MetricName === 'ApproximateNumberOfMessagesVisible');
    expect(dlq.map((a) => a.Dimensions[0].Value['Fn::GetAtt'][0]).sort()).toEqual([logicalIdOf('SesEventsQueueDeadLetters'), logicalIdOf('WebhookQueueDeadLetters'), logicalIdOf('ScheduleQueueDeadLetters')].sort());
    for (const a of dlq) expect(a).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
  });
});

describe('SES tenants', () => {
  const sesArn = (suffix: unknown[], account: unknown = { Ref: 'AWS::AccountId' }) => ({
    'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':ses:', { Ref: 'AWS::Region' }, ':', account, ...suffix]],
  });

  it('gives the operator a managed policy with exactly the tenant and identity calls of the admin CLI, on the Organizations\' tenants, the four configuration sets, the identities and the chosen reputation policy', () => {
    // The operator's other policy, OperatorPolicy, is the scheduled send's (scheduled-send.test.ts).
    const policies = Object.entries(template.findResources('AWS::IAM::ManagedPolicy')).filter(([logicalId]) => logicalId.startsWith('TenantAdministrationPolicy')).map(([, policy]) => policy);
    expect(policies).toHaveLength(1);
    const tenants = sesArn([':tenant/org-*']);
    expect(policies[0]!.Properties.PolicyDocument.Statement).toEqual([
      { Sid: 'Tenants', Effect: 'Allow', Action: ['ses:CreateTenant', 'ses:DeleteTenant', 'ses:GetTenant'], Resource: tenants },
      {
        Sid: 'TenantResources',
        Effect: 'Allow',
        Action: ['ses:CreateTenantResourceAssociation', 'ses:DeleteTenantResourceAssociation'],
        Resource: [...configurationSetArns(stack), sesArn([':identity/*']), tenants],
      },
      {
        Sid: 'TenantReputationPolicy',
        Effect: 'Allow',
        Action: 'ses:UpdateReputationEntityPolicy',
        Resource: [tenants, { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':ses:', { Ref: 'AWS::Region' }, ':aws:reputation-policy/standard']] }],
      },
      {
        Sid: 'SenderIdentities',
        Effect: 'Allow',
        Action: ['ses:CreateEmailIdentity', 'ses:GetEmailIdentity', 'ses:PutEmailIdentityMailFromAttributes'],
        Resource: sesArn([':identity/*']),
      },
    ]);
    expect(template.toJSON().Outputs.TenantReputationPolicy.Value).toBe('standard');
  });

  it('passes SES_TENANTS and the REPUTATION_* settings to the functions, and can be turned off', () => {
    const custom = Template.fromStack(buildStack({ sesTenantReputationPolicy: 'strict', reputationMinSends: 500, reputationBounceRate: '0.04' }).stack);
    custom.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ POWERTOOLS_SERVICE_NAME: 'email-send-api-events', SES_TENANTS: 'true', REPUTATION_MIN_SENDS: '500', REPUTATION_BOUNCE_RATE: '0.04' }) },
    });
    expect(JSON.stringify(custom.toJSON())).toContain(':aws:reputation-policy/strict');
    const off = Template.fromStack(buildStack({ sesTenants: false }).stack);
    // Only OperatorPolicy, which has nothing of SES.
    expect(Object.keys(off.findResources('AWS::IAM::ManagedPolicy')).map((logicalId) => logicalId.replace(/[0-9A-F]{8}$/, ''))).toEqual(['OperatorPolicy']);
    off.hasResourceProperties('AWS::Lambda::Function', { Environment: { Variables: Match.objectLike({ POWERTOOLS_SERVICE_NAME: 'email-send-api', SES_TENANTS: 'false' }) } });
    expect(JSON.stringify(off.toJSON())).not.toContain('tenant/org-*');
    expect(() => buildStack({ sesTenantReputationPolicy: 'lenient' })).toThrow(/sesTenantReputationPolicy/);
    expect(() => buildStack({ reputationMinSends: 0 })).toThrow(/REPUTATION_MIN_SENDS/);
  });
});
