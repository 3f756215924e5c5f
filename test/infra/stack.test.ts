import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { DEFAULTS, loadConfig } from '../../functions/shared/runtime/config';
import { TABLE_SCHEMA } from '../../functions/shared/store/table';
import { SEND_PATH as HANDLER_SEND_PATH } from '../../functions/send/handler';
import { CJS_REQUIRE_BANNER } from '../../infra/aws/send-bundle';
import { INFRA_DEFAULTS } from '../../infra/aws/settings';
import { EmailSendApiStack, SEND_PATH } from '../../infra/aws/stack';
import { buildStack, CDK_JSON, configurationSetArns, recordKeyUseStatement } from './support';

type Json = Record<string, unknown>;

function logicalId(stack: Stack, construct: { node: { defaultChild?: unknown } }): string {
  return stack.getLogicalId(construct.node.defaultChild as Parameters<Stack['getLogicalId']>[0]);
}

function onlyResource(template: Template, type: string): Json {
  const found = Object.values(template.findResources(type));
  expect(found).toHaveLength(1);
  return found[0] as Json;
}

function asArray<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** Every statement of every identity policy in the template, wherever CloudFormation allows one. */
function allPolicyStatements(template: Template): Json[] {
  const statements: Json[] = [];
  const documents: Json[] = [];
  for (const policy of Object.values(template.findResources('AWS::IAM::Policy'))) documents.push(policy.Properties.PolicyDocument);
  for (const policy of Object.values(template.findResources('AWS::IAM::ManagedPolicy'))) documents.push(policy.Properties.PolicyDocument);
  for (const role of Object.values(template.findResources('AWS::IAM::Role'))) {
    for (const inline of asArray<Json>(role.Properties.Policies)) documents.push(inline.PolicyDocument as Json);
  }
  for (const document of documents) statements.push(...asArray<Json>(document.Statement as Json[]));
  return statements;
}

const X_RAY_WRITES = ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'];

describe('EmailSendApiStack (default context, bundled as by cdk synth)', () => {
  let app: App;
  let stack: EmailSendApiStack;
  let template: Template;
  let ids: { table: string; configurationSet: string; functionLogs: string; accessLogs: string; fn: string; api: string; role: string };

  beforeAll(() => {
    ({ app, stack } = buildStack({}, { bundle: true }));
    template = Template.fromStack(stack);
    ids = {
      table: logicalId(stack, stack.table),
      configurationSet: logicalId(stack, stack.configurationSet),
      functionLogs: logicalId(stack, stack.node.findChild('SendFunctionLogs')),
      accessLogs: logicalId(stack, stack.node.findChild('ApiAccessLogs')),
      fn: logicalId(stack, stack.sendFunction),
      api: logicalId(stack, stack.api),
      role: logicalId(stack, stack.node.findChild('SendFunctionRole')),
    };
  });

  describe('HTTP API', () => {
    it('serves the handler\'s path', () => {
      expect(SEND_PATH).toBe(HANDLER_SEND_PATH);
    });

    it('routes POST /v1.2/email/send and $default, both to the send function\'s one Lambda proxy integration', () => {
      const sendIntegrations = Object.entries(template.findResources('AWS::ApiGatewayV2::Integration')).filter(
        ([, integration]) => JSON.stringify(integration.Properties.IntegrationUri) === JSON.stringify({ 'Fn::GetAtt': [ids.fn, 'Arn'] }),
      );
      expect(sendIntegrations).toHaveLength(1);
      const integration = [sendIntegrations[0]![0]];
      const routes = Object.values(template.findResources('AWS::ApiGatewayV2::Route')).filter(
        (route) => JSON.stringify(route.Properties.Target) === JSON.stringify({ 'Fn::Join': ['', ['integrations/', { Ref: integration[0] }]] }),
      );
      expect(routes.map((r) => r.Properties.RouteKey).sort()).toEqual(['$default', 'POST /v1.2/email/send']);
      for (const route of routes) {
        expect(route.Properties.Target).toEqual({ 'Fn::Join': ['', ['integrations/', { Ref: integration[0] }]] });
        // Authentication is the function's (API keys, CONTRACT section 3); see the cdk-nag test.
        expect(route.Properties.AuthorizationType).toBe('NONE');
      }
      template.hasResourceProperties('AWS::ApiGatewayV2::Integration', {
        IntegrationType: 'AWS_PROXY',
        PayloadFormatVersion: '2.0',
        IntegrationUri: { 'Fn::GetAtt': [ids.fn, 'Arn'] },
      });
    });

    it('lets only this API invoke the functions behind its routes (send, status, cancel, templates, settings API and page), and nothing invoke the others', () => {
      const permissions = Object.values(template.findResources('AWS::Lambda::Permission'));
      const invokable = [stack.sendFunction, stack.lifecycle.status.fn, stack.scheduledSend.cancel.fn, stack.templatesFunction, stack.settingsApiFunction, stack.settingsPageFunction].map((fn) => logicalId(stack, fn));
      expect(new Set(permissions.map((permission) => permission.Properties.FunctionName['Fn::GetAtt'][0]))).toEqual(new Set(invokable));
      for (const permission of permissions) {
        expect(permission.Properties).toMatchObject({ Action: 'lambda:InvokeFunction', Principal: 'apigateway.amazonaws.com' });
        expect(JSON.stringify(permission.Properties.SourceArn)).toContain(`{"Ref":"${ids.api}"}`);
      }
    });

    it('has one auto-deployed $default stage with the context throttling', () => {
      const stage = onlyResource(template, 'AWS::ApiGatewayV2::Stage');
      expect(stage.Properties).toMatchObject({
        StageName: '$default',
        AutoDeploy: true,
        ApiId: { Ref: ids.api },
        DefaultRouteSettings: { ThrottlingRateLimit: 25, ThrottlingBurstLimit: 50 },
      });
    });

    it('writes JSON access logs, without request headers, to a log group with retention', () => {
      const stage = onlyResource(template, 'AWS::ApiGatewayV2::Stage') as { Properties: { AccessLogSettings: { DestinationArn: unknown; Format: string } } };
      const settings = stage.Properties.AccessLogSettings;
      expect(settings.DestinationArn).toEqual({ 'Fn::GetAtt': [ids.accessLogs, 'Arn'] });
      const format = JSON.parse(settings.Format) as Record<string, string>;
      expect(format).toMatchObject({
        requestId: '$context.requestId',
        sourceIp: '$context.identity.sourceIp',
        routeKey: '$context.routeKey',
        status: '$context.status',
        integrationError: '$context.integrationErrorMessage',
      });
      expect(settings.Format.toLowerCase()).not.toMatch(/authorization|\$request\.header|\$context\.authorizer/);
      // Nor the path, where a key put in the URL by mistake would be logged unredacted.
      expect(settings.Format).not.toMatch(/\$context\.path|\$request\.path/);
      expect(template.toJSON().Resources[ids.accessLogs].Properties.RetentionInDays).toBe(30);
    });

    it('has no custom domain unless the context names one', () => {
      template.resourceCountIs('AWS::ApiGatewayV2::DomainName', 0);
      template.resourceCountIs('AWS::ApiGatewayV2::ApiMapping', 0);
    });
  });

  describe('send function', () => {
    it('runs Node.js 22 or newer on arm64, bundled, within the API Gateway time limit', () => {
      const fn = template.toJSON().Resources[ids.fn];
      const runtime = /^nodejs(\d+)\.x$/.exec(fn.Properties.Runtime);
      expect(Number(runtime?.[1])).toBeGreaterThanOrEqual(22);
      expect(fn.Properties.Runtime).toBe('nodejs24.x');
      expect(fn.Properties.Architectures).toEqual(['arm64']);
      expect(fn.Properties.Timeout).toBeLessThanOrEqual(29);
      expect(fn.Properties.Timeout).toBe(28);
      expect(fn.Properties.MemorySize).toBe(1024);
      // ESM output is index.mjs; the handler export of functions/send/handler.ts is `handler`.
      expect(fn.Properties.Handler).toBe('index.handler');
    });

    it('is bundled by esbuild into an ESM index.mjs with its source map, and the chunks it loads when needed', () => {
      const code = template.toJSON().Resources[ids.fn].Properties.Code as { S3Key: string };
      const assetDir = join(app.synth().directory, `asset.${code.S3Key.replace(/\.zip$/, '')}`);
      expect(readdirSync(assetDir).sort()).toEqual(['chunks', 'index.mjs', 'index.mjs.map']);
      expect(readdirSync(join(assetDir, 'chunks')).every((file) => /\.mjs(\.map)?$/.test(file))).toBe(true);
      const bundle = readFileSync(join(assetDir, 'index.mjs'), 'utf8');
      expect(bundle.startsWith(CJS_REQUIRE_BANNER)).toBe(true);
      expect(bundle).toMatch(/\/\/# sourceMappingURL=index\.mjs\.map\s*$/);
    });

    it('logs JSON to its own log group with the context retention', () => {
      template.hasResourceProperties('AWS::Lambda::Function', {
        LoggingConfig: { LogFormat: 'JSON', LogGroup: { Ref: ids.functionLogs } },
      });
      expect(template.toJSON().Resources[ids.functionLogs].Properties.RetentionInDays).toBe(30);
    });

    it('gets every setting the handler reads, and no local endpoint overrides', () => {
      const fn = template.toJSON().Resources[ids.fn];
      expect(fn.Properties.Environment.Variables).toEqual({
        TABLE_NAME: { Ref: ids.table },
        SES_CONFIGURATION_SET: { Ref: ids.configurationSet },
        MAX_MESSAGES: '100',
        MAX_BODY_BYTES: String(5 * 1024 * 1024),
        SEND_CONCURRENCY: String(DEFAULTS.sendConcurrency),
        AUTH_CACHE_SECONDS: '30',
        SEND_DEADLINE_MS: '25000',
        PROBLEM_TYPE_BASE: '/problems/',
        SES_TENANTS: 'true',
        POWERTOOLS_SERVICE_NAME: 'email-send-api',
        // Lambda's own segment only: the X-Ray SDK stays out of the cold start unless traceSdkCalls asks for it.
        POWERTOOLS_TRACE_ENABLED: 'false',
        // Scheduling (test/infra/scheduled-send.test.ts) and its webhooks.
        SCHEDULE_GROUP_NAME: expect.stringMatching(/^EmailSendApi-ScheduleGroup-/),
        SCHEDULE_TARGET_ARN: { 'Fn::GetAtt': [expect.stringMatching(/^ScheduleQueue[0-9A-F]{8}$/), 'Arn'] },
        SCHEDULER_ROLE_ARN: { 'Fn::GetAtt': [expect.stringMatching(/^SchedulerRole/), 'Arn'] },
        SCHEDULE_DEAD_LETTER_ARN: { 'Fn::GetAtt': [expect.stringMatching(/^ScheduleQueueDeadLetters/), 'Arn'] },
        SCHEDULE_QUEUE_URL: { Ref: expect.stringMatching(/^ScheduleQueue[0-9A-F]{8}$/) },
        WEBHOOK_QUEUE_URL: { Ref: expect.stringMatching(/^WebhookQueue[0-9A-F]{8}$/) },
        // Test mode's only way out (test/infra/test-mode.test.ts).
        SES_EVENTS_QUEUE_URL: { Ref: expect.stringMatching(/^SesEventsQueue[0-9A-F]{8}$/) },
      });
    });

    it('traces actively by default', () => {
      template.hasResourceProperties('AWS::Lambda::Function', { TracingConfig: { Mode: 'Active' } });
    });

    it('gets an environment the function\'s own configuration loader accepts', () => {
      const variables = template.toJSON().Resources[ids.fn].Properties.Environment.Variables as Record<string, unknown>;
      // A reference resolves at deploy time: a queue URL to a URL, anything else to a name or an ARN.
      const env = Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, typeof v === 'string' ? v : k.endsWith('_URL') ? `https://sqs.eu-west-1.amazonaws.com/123456789012/${k}` : `resolved-${k}`]));
      const config = loadConfig({ ...env, AWS_REGION: 'eu-west-1' });
      expect(config).toMatchObject({ dynamodbEndpoint: undefined, sesEndpoint: undefined, sesConfigurationSet: 'resolved-SES_CONFIGURATION_SET' });
    });
  });

  describe('IAM', () => {
    it('gives the function a role of its own, with no managed policies', () => {
      const role = template.toJSON().Resources[ids.role] as { Properties: Json };
      for (const each of Object.values(template.findResources('AWS::IAM::Role'))) expect(each.Properties.ManagedPolicyArns).toBeUndefined();
      expect(role.Properties.AssumeRolePolicyDocument).toEqual({
        Version: '2012-10-17',
        Statement: [{ Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } }],
      });
      template.hasResourceProperties('AWS::Lambda::Function', { Role: { 'Fn::GetAtt': [ids.role, 'Arn'] } });
    });

    it('allows exactly: X-Ray trace writes, its own logs, BatchGetItem on key, Organization and suppression items only, idempotency records in IDEM# partitions, template versions in TPL# (read only), the send-rate budget in BUDGET#, GetAccount, SendEmail on identities, the four configuration sets (untracked and tracked) and the Organizations\' tenants, and the pause attributes of Organization items', () => {
            const policies = Object.values(template.findResources('AWS::IAM::Policy')).filter((each) => JSON.stringify(each.Properties.Roles) === JSON.stringify([{ Ref: ids.role }]));
      expect(policies).toHaveLength(1);
      const policy = policies[0] as { Properties: { PolicyDocument: Json; Roles: unknown } };
      const sesArn = (suffix: unknown[]) => ({
        'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':ses:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ...suffix]],
      });
      expect(policy.Properties.PolicyDocument).toEqual({
        Version: '2012-10-17',
        Statement: [
          {
            Sid: 'WriteOwnLogs',
            Effect: 'Allow',
            Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
            Resource: { 'Fn::GetAtt': [ids.functionLogs, 'Arn'] },
          },
          {
            Sid: 'ReadAccessRecords',
            Effect: 'Allow',
            Action: 'dynamodb:BatchGetItem',
            Resource: { 'Fn::GetAtt': [ids.table, 'Arn'] },
            Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['KEY#*', 'ORG#*', 'SUPP#*'] } },
          },
          {
            Sid: 'ReadKeyHolders',
            Effect: 'Allow',
            Action: 'dynamodb:BatchGetItem',
            Resource: { 'Fn::GetAtt': [ids.table, 'Arn'] },
            // Whether a key's user still holds it, and nothing else of a user (security audit round 2, finding 1).
            Condition: {
              'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['USER#*'] },
              'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['pk', 'sk', 'keyHash', 'keyScopes', 'keySenders', 'keyExpiresAt'] },
              StringEqualsIfExists: { 'dynamodb:Select': ['SPECIFIC_ATTRIBUTES'], 'dynamodb:ReturnValues': ['NONE'] },
            },
          },
          recordKeyUseStatement({ 'Fn::GetAtt': [ids.table, 'Arn'] }),
          {
            Sid: 'IdempotencyRecords',
            Effect: 'Allow',
            Action: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem'],
            Resource: { 'Fn::GetAtt': [ids.table, 'Arn'] },
            Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['IDEM#*'] } },
          },
          {
            Sid: 'ReadTemplates',
            Effect: 'Allow',
            Action: ['dynamodb:BatchGetItem', 'dynamodb:GetItem'],
            Resource: { 'Fn::GetAtt': [ids.table, 'Arn'] },
            Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['TPL#*'] } },
          },
          {
            Sid: 'SendRateBudget',
            Effect: 'Allow',
            Action: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
            Resource: { 'Fn::GetAtt': [ids.table, 'Arn'] },
            Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['BUDGET#*'] } },
          },
          { Sid: 'ReadSendQuota', Effect: 'Allow', Action: 'ses:GetAccount', Resource: '*' },
          {
            Sid: 'SendEmail',
            Effect: 'Allow',
            Action: 'ses:SendEmail',
            Resource: [...configurationSetArns(stack), sesArn([':identity/*']), sesArn([':tenant/org-*'])],
          },
          {
            Sid: 'PauseOrganization',
            Effect: 'Allow',
            Action: 'dynamodb:UpdateItem',
            Resource: { 'Fn::GetAtt': [ids.table, 'Arn'] },
            Condition: {
              'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['ORG#*'] },
              'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['pk', 'sk', 'pausedAt', 'pausedReason'] },
              StringEqualsIfExists: { 'dynamodb:ReturnValues': ['NONE'] },
            },
          },
          {
            Effect: 'Allow',
            Action: ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'],
            Resource: '*',
          },
          // Scheduling: exactly these, asserted one by one in test/infra/scheduled-send.test.ts.
          ...['WriteSchedules', 'CreateSchedules', 'PassSchedulerRole', 'QueueShortWaits', 'ReadWebhooks', 'QueueWebhooks'].map((Sid) => expect.objectContaining({ Sid })),
          // Test mode: asserted in test/infra/test-mode.test.ts.
          expect.objectContaining({ Sid: 'TestModeEvents' }),
        ],
      });
    });

    it('has no statement with Resource "*", a wildcard action, NotAction or NotResource', () => {
      const statements = allPolicyStatements(template);
      expect(statements.length).toBeGreaterThan(0);
      for (const statement of statements) {
        expect(statement.NotAction).toBeUndefined();
        expect(statement.NotResource).toBeUndefined();
        for (const action of asArray(statement.Action as string | string[])) expect(action).not.toContain('*');
        // X-Ray's write actions and SES GetAccount have no resource-level permissions: "*" is the
        // only resource they take.
        const starOnly = asArray(statement.Action as string | string[]).every((action) => [...X_RAY_WRITES, 'ses:GetAccount'].includes(action));
        if (!starOnly) for (const resource of asArray(statement.Resource)) expect(resource).not.toBe('*');
      }
    });
  });

  describe('DynamoDB table', () => {
    it('uses the shared key schema and TTL attribute', () => {
      template.hasResourceProperties('AWS::DynamoDB::Table', {
        KeySchema: [
          { AttributeName: TABLE_SCHEMA.partitionKey, KeyType: 'HASH' },
          { AttributeName: TABLE_SCHEMA.sortKey, KeyType: 'RANGE' },
        ],
        AttributeDefinitions: [
          { AttributeName: TABLE_SCHEMA.partitionKey, AttributeType: 'S' },
          { AttributeName: TABLE_SCHEMA.sortKey, AttributeType: 'S' },
        ],
        TimeToLiveSpecification: { AttributeName: TABLE_SCHEMA.ttlAttribute, Enabled: true },
      });
    });

    it('is on-demand, with point-in-time recovery, deletion protection, and retained on stack deletion', () => {
      template.resourceCountIs('AWS::DynamoDB::Table', 1);
      template.hasResource('AWS::DynamoDB::Table', {
        DeletionPolicy: 'Retain',
        UpdateReplacePolicy: 'Retain',
        Properties: Match.objectLike({
          BillingMode: 'PAY_PER_REQUEST',
          PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
          DeletionProtectionEnabled: true,
        }),
      });
      // A fixed name would block a second stack in the account and any replacement.
      expect(template.toJSON().Resources[ids.table].Properties.TableName).toBeUndefined();
    });
  });

  it('has an SES configuration set with reputation metrics, passed to the function', () => {
    template.hasResourceProperties('AWS::SES::ConfigurationSet', {
      ReputationOptions: { ReputationMetricsEnabled: true },
      SendingOptions: { SendingEnabled: true },
    });
  });

  describe('alarms', () => {
    let alarms: Json[];
    beforeAll(() => {
      alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties as Json);
    });

    const metricNames = (alarm: Json) =>
      asArray(alarm.Metrics as Json[]).flatMap((m) => ((m.MetricStat as Json | undefined)?.Metric ? [((m.MetricStat as Json).Metric as Json).MetricName] : []));

    it('watches the API 5xx rate, function errors and throttles, p99 latency, the SES reputation, the three dead-letter queues and paused Organizations; none notify by default', () => {
      expect(alarms).toHaveLength(10);
      for (const alarm of alarms) {
        expect(alarm.TreatMissingData).toBe('notBreaching');
        expect(alarm.AlarmActions).toBeUndefined();
        expect(alarm.OKActions).toBeUndefined();
      }
    });

    it('fires when the events, send or scheduled-send function pauses an Organization (their OrganizationsPaused metric)', () => {
      const paused = alarms.find((a) => metricNames(a).includes('OrganizationsPaused'));
      expect(paused).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold', EvaluationPeriods: 1 });
      const services = (paused!.Metrics as Record<string, any>[]).flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric] : []));
      expect(services).toEqual([
        { Namespace: 'EmailSendApi', MetricName: 'OrganizationsPaused', Dimensions: [{ Name: 'service', Value: 'email-send-api' }] },
        { Namespace: 'EmailSendApi', MetricName: 'OrganizationsPaused', Dimensions: [{ Name: 'service', Value: 'email-send-api-events' }] },
        { Namespace: 'EmailSendApi', MetricName: 'OrganizationsPaused', Dimensions: [{ Name: 'service', Value: 'email-send-api-scheduled' }] },
      ]);
      expect(paused!.Metrics).toEqual(expect.arrayContaining([expect.objectContaining({ Expression: 'p0 + p1 + p2', ReturnData: true })]));
    });

    it('computes the 5xx rate as a percentage of requests on this API', () => {
      const rate = alarms.find((a) => metricNames(a).includes('5xx'));
      expect(rate).toMatchObject({ Threshold: 5, ComparisonOperator: 'GreaterThanThreshold', EvaluationPeriods: 5, DatapointsToAlarm: 3 });
      expect(metricNames(rate!).sort()).toEqual(['5xx', 'Count']);
      expect(rate!.Metrics).toEqual(
        expect.arrayContaining([expect.objectContaining({ Expression: 'IF(requests > 0, 100 * errors / requests, 0)', ReturnData: true })]),
      );
      expect(JSON.stringify(rate!.Metrics)).toContain(`{"Name":"ApiId","Value":{"Ref":"${ids.api}"}}`);
    });

    it('alarms on any function error or throttle', () => {
      for (const metric of ['Errors', 'Throttles']) {
        const alarm = alarms.find((a) => a.MetricName === metric);
        expect(alarm).toMatchObject({
          Namespace: 'AWS/Lambda',
          Statistic: 'Sum',
          Threshold: 1,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
          Dimensions: [{ Name: 'FunctionName', Value: { Ref: ids.fn } }],
        });
      }
    });

    it('alarms on API p99 latency above the context threshold', () => {
      const alarm = alarms.find((a) => a.MetricName === 'Latency');
      expect(alarm).toMatchObject({
        Namespace: 'AWS/ApiGateway',
        ExtendedStatistic: 'p99',
        Threshold: 10_000,
        ComparisonOperator: 'GreaterThanThreshold',
        EvaluationPeriods: 3,
      });
    });
  });

  it('outputs the full send URL, the table name, the configuration set name and the region', () => {
    const outputs = template.toJSON().Outputs;
    expect(outputs.SendUrl.Value).toEqual({
      'Fn::Join': ['', ['https://', { Ref: ids.api }, '.execute-api.', { Ref: 'AWS::Region' }, '.', { Ref: 'AWS::URLSuffix' }, '/v1.2/email/send']],
    });
    expect(outputs.TableName.Value).toEqual({ Ref: ids.table });
    expect(outputs.ConfigurationSetName.Value).toEqual({ Ref: ids.configurationSet });
    expect(outputs.Region.Value).toEqual({ Ref: 'AWS::Region' });
    expect(outputs.CustomDomainSendUrl).toBeUndefined();
  });
});

describe('EmailSendApiStack context', () => {
  it('traces SDK calls only when traceSdkCalls asks for it, and only under active tracing', () => {
    // [tracing mode, POWERTOOLS_TRACE_ENABLED] of each of the service's functions (not the CDK's own helpers).
    const tracingOf = (context: Record<string, unknown>) =>
      Object.values(Template.fromStack(buildStack(context).stack).findResources('AWS::Lambda::Function'))
        .map((fn) => (fn as { Properties: { TracingConfig?: { Mode: string }; Environment: { Variables: Record<string, string> } } }).Properties)
        .filter((props) => props.Environment?.Variables?.POWERTOOLS_SERVICE_NAME !== undefined)
        .map((props) => `${props.TracingConfig?.Mode ?? 'none'} ${props.Environment.Variables.POWERTOOLS_TRACE_ENABLED}`);
    const byDefault = tracingOf({});
    expect(byDefault.length).toBeGreaterThan(5);
    expect(new Set(byDefault)).toEqual(new Set(['Active false']));
    expect(new Set(tracingOf({ traceSdkCalls: 'true' }))).toEqual(new Set(['Active true']));
    expect(new Set(tracingOf({ tracing: 'false', traceSdkCalls: 'true' }))).toEqual(new Set(['none false']));
  });

  it('turns tracing off with the tracing context key: no X-Ray statement, tracer disabled', () => {
    const { stack } = buildStack({ tracing: 'false' });
    const template = Template.fromStack(stack);
    const fn = Object.values(template.findResources('AWS::Lambda::Function'))[0] as { Properties: Json };
    expect(fn.Properties.TracingConfig).toBeUndefined();
    expect((fn.Properties.Environment as { Variables: Record<string, string> }).Variables.POWERTOOLS_TRACE_ENABLED).toBe('false');
    const actions = allPolicyStatements(template).flatMap((statement) => asArray(statement.Action as string | string[]));
    expect(actions.some((action) => action.startsWith('xray:'))).toBe(false);
  });

  it('cdk.json lists every infrastructure setting with its default', () => {
    const listed = Object.fromEntries(Object.keys(INFRA_DEFAULTS).map((key) => [key, CDK_JSON.context[key]]));
    expect(listed).toEqual(INFRA_DEFAULTS);
    expect(CDK_JSON.app).toBe('npx tsx infra/aws/app.ts');
  });

  it('maps a custom domain to the stage and outputs its URL and DNS target', () => {
    const certificateArn = 'arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-1111-2222-3333-444455556666';
    const { stack } = buildStack({ customDomainName: 'Mail-API.example.com', customDomainCertificateArn: certificateArn });
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::ApiGatewayV2::DomainName', {
      DomainName: 'mail-api.example.com',
      DomainNameConfigurations: [Match.objectLike({ CertificateArn: certificateArn, EndpointType: 'REGIONAL', SecurityPolicy: 'TLS_1_2' })],
    });
    template.hasResourceProperties('AWS::ApiGatewayV2::ApiMapping', { Stage: Match.anyValue(), ApiId: { Ref: logicalId(stack, stack.api) } });
    const outputs = template.toJSON().Outputs;
    expect(JSON.stringify(outputs.CustomDomainSendUrl.Value)).toContain('/v1.2/email/send');
    expect(outputs.CustomDomainTarget.Value).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^CustomDomain/), 'RegionalDomainName'] });
    expect(outputs.SendUrl).toBeDefined();
  });

  it('refuses a custom domain without its certificate, and the reverse', () => {
    expect(() => buildStack({ customDomainName: 'mail.example.com' })).toThrow(/must be set together/);
    expect(() => buildStack({ customDomainCertificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/abc' })).toThrow(/must be set together/);
  });

  it('sends every alarm\'s ALARM and OK transitions to the context SNS topic', () => {
    const topic = 'arn:aws:sns:eu-west-1:123456789012:email-send-api-alarms';
    const template = Template.fromStack(buildStack({ alarmTopicArn: topic }).stack);
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm'));
    expect(alarms).toHaveLength(10);
    for (const alarm of alarms) {
      expect(alarm.Properties.AlarmActions).toEqual([topic]);
      expect(alarm.Properties.OKActions).toEqual([topic]);
    }
  });

  it('takes throttling, memory, retention and alarm thresholds from context, as `-c key=value` strings too', () => {
    const { stack } = buildStack({
      throttleRateLimit: '100',
      throttleBurstLimit: 200,
      functionMemoryMb: '2048',
      logRetentionDays: '90',
      latencyP99AlarmMs: '5000',
    });
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', { DefaultRouteSettings: { ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 } });
    template.hasResourceProperties('AWS::Lambda::Function', { MemorySize: 2048 });
    template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 90 });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'Latency', Threshold: 5000 });
  });

  it('takes the service settings from context and checks them with the function\'s own rules', () => {
    const template = Template.fromStack(buildStack({ maxMessages: '50', authCacheSeconds: 0, problemTypeBase: 'https://docs.example.com/problems/', sesMaxSendRate: 14 }).stack);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ MAX_MESSAGES: '50', AUTH_CACHE_SECONDS: '0', PROBLEM_TYPE_BASE: 'https://docs.example.com/problems/', SES_MAX_SEND_RATE: '14' }) },
    });
    expect(() => buildStack({ authCacheSeconds: 120 })).toThrow(/context "authCacheSeconds" \(AUTH_CACHE_SECONDS\) must be a whole number from 0 to 60/);
    expect(() => buildStack({ maxScheduleDays: 999 })).toThrow(/context "maxScheduleDays" \(MAX_SCHEDULE_DAYS\) must be a whole number from 1 to 365/);
    // Two at once, each by its key, and a value that happens to be a variable's name is quoted as given.
    expect(() => buildStack({ maxScheduleDays: 0, maxMessages: 'MAX_MESSAGES' })).toThrow(
      /^Invalid CDK context: context "maxMessages" \(MAX_MESSAGES\) must be a whole number from 1 to 10000, got "MAX_MESSAGES"; context "maxScheduleDays" \(MAX_SCHEDULE_DAYS\) must be a whole number from 1 to 365, got "0"$/,
    );
    expect(() => buildStack({ maxMessages: 'lots' })).toThrow(/MAX_MESSAGES/);
  });

  it('rejects malformed infrastructure settings with the key named', () => {
    expect(() => buildStack({ throttleRateLimit: '-5' })).toThrow(/"throttleRateLimit"/);
    expect(() => buildStack({ logRetentionDays: 10 })).toThrow(/"logRetentionDays"/);
    expect(() => buildStack({ alarmTopicArn: 'my-topic' })).toThrow(/"alarmTopicArn"/);
    expect(() => buildStack({ functionMemoryMb: 64 })).toThrow(/"functionMemoryMb"/);
  });
});
