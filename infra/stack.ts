/**
 * The AWS stack: HTTP API -> send function -> DynamoDB table + Amazon SES.
 *
 * Environment-agnostic (no account or region, no lookups) so `cdk synth` runs anywhere without
 * credentials; account and region come from the credentials at deploy time.
 */
import { Aws, CfnOutput, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { StackProps } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { DomainName, HttpApi, HttpMethod, HttpStage, LogGroupLogDestination, SecurityPolicy } from 'aws-cdk-lib/aws-apigatewayv2';
import type { HttpRoute } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { Alarm, ComparisonOperator, MathExpression, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { IAlarmAction } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { AttributeType, BillingMode, Table } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, LoggingFormat, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { ConfigurationSet } from 'aws-cdk-lib/aws-ses';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { SEND_FUNCTION_PARTITIONS, TABLE_SCHEMA } from '../functions/shared/store/table';
import { LOCK_FILE, REPO_ROOT, SEND_BUNDLING, SEND_ENTRY, SEND_RUNTIME } from './send-bundle';
import { readSettings } from './settings';
import { SEND_PATH } from '../functions/send/route';

export { SEND_PATH } from '../functions/send/route';

export const SERVICE_NAME = 'email-send-api';

/**
 * API Gateway gives up on an integration after 30 s and answers a bare 503. Cold-start
 * initialisation counts against those 30 s but not against the function's timeout, so the
 * function stops at 28 s; its own deadline (remaining time minus a margin) then always lets it
 * answer with the contract's response first.
 */
const FUNCTION_TIMEOUT = Duration.seconds(28);

export class EmailSendApiStack extends Stack {
  readonly table: Table;
  readonly sendFunction: NodejsFunction;
  readonly api: HttpApi;
  readonly stage: HttpStage;
  readonly configurationSet: ConfigurationSet;

  constructor(scope: Construct, id: string, props: StackProps = {}) {
    super(scope, id, props);
    const settings = readSettings(this);

    this.table = new Table(this, 'Table', {
      partitionKey: { name: TABLE_SCHEMA.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE_SCHEMA.sortKey, type: AttributeType.STRING },
      timeToLiveAttribute: TABLE_SCHEMA.ttlAttribute,
      // Traffic is bursty and mostly idle: on-demand costs nothing at rest and needs no tuning.
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // The table holds every tenant's keys and memberships: losing it locks every client out,
      // so neither a stack deletion nor a stray console click may remove it.
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.configurationSet = new ConfigurationSet(this, 'ConfigurationSet', {
      reputationMetrics: true,
      sendingEnabled: true,
    });

    const functionLogs = new LogGroup(this, 'SendFunctionLogs', { retention: settings.logRetention });

    // A role of our own instead of the default one: the default attaches the managed
    // AWSLambdaBasicExecutionRole, whose log permissions apply to every log group in the account.
    const role = new Role(this, 'SendFunctionRole', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: 'Send function: read access records, send through SES, write its own logs',
    });
    role.addToPolicy(
      new PolicyStatement({
        sid: 'WriteOwnLogs',
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        // A log group's ARN attribute ends in `:*`, which covers that group's streams only.
        resources: [functionLogs.logGroupArn],
      }),
    );
    role.addToPolicy(
      new PolicyStatement({
        sid: 'ReadAccessRecords',
        // Authentication reads the key and the Organization in one BatchGetItem, and nothing else.
        actions: ['dynamodb:BatchGetItem'],
        resources: [this.table.tableArn],
      }),
    );
    role.addToPolicy(
      new PolicyStatement({
        sid: 'IdempotencyRecords',
        // Idempotency records and their per-message checkpoints: read, write and query, but only
        // in partitions starting IDEM#, so the function can never write a key, user or
        // Organization item.
        actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:Query'],
        resources: [this.table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${SEND_FUNCTION_PARTITIONS.idempotency}*`] } },
      }),
    );
    role.addToPolicy(
      new PolicyStatement({
        sid: 'SendRateBudget',
        // The account's send-rate budget, shared by every instance: one item, read and moved on
        // with conditional writes, in the BUDGET# partition only.
        actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
        resources: [this.table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${SEND_FUNCTION_PARTITIONS.sendBudget}*`] } },
      }),
    );
    role.addToPolicy(
      new PolicyStatement({
        sid: 'ReadSendQuota',
        // GetAccount gives the account's MaxSendRate, the budget the function paces to. SES
        // defines no resource type for it, so "*" is the only resource it takes; it only reads.
        actions: ['ses:GetAccount'],
        resources: ['*'],
      }),
    );
    const configurationSetArn = this.formatArn({
      service: 'ses',
      resource: 'configuration-set',
      resourceName: this.configurationSet.configurationSetName,
    });
    role.addToPolicy(
      new PolicyStatement({
        sid: 'SendEmail',
        // SES v2 SendEmail authorises the sending identity and, when one is named, the
        // configuration set; both must be listed. Which identity an Organization may use is the
        // service's decision (its sender list), so every identity of this account and region is
        // allowed here, and SES itself refuses identities that are not verified.
        actions: ['ses:SendEmail'],
        resources: [this.formatArn({ service: 'ses', resource: 'identity', resourceName: '*' }), configurationSetArn],
      }),
    );

    this.sendFunction = new NodejsFunction(this, 'SendFunction', {
      description: `POST ${SEND_PATH}: validate, authorise and send through Amazon SES`,
      entry: SEND_ENTRY,
      handler: 'handler',
      projectRoot: REPO_ROOT,
      depsLockFilePath: LOCK_FILE,
      runtime: SEND_RUNTIME,
      architecture: Architecture.ARM_64,
      // CPU scales with memory, and this function's cost is CPU more than memory: TLS handshakes
      // to DynamoDB and SES on a cold start, parsing and validating up to 5 MiB of JSON, building
      // up to 100 MIME messages, and 16 concurrent SES calls. 1024 MB (about 0.6 vCPU) keeps that
      // well inside the API deadline; the heap needs far less (a 5 MiB body is a few tens of MB).
      memorySize: settings.functionMemoryMb,
      timeout: FUNCTION_TIMEOUT,
      role,
      logGroup: functionLogs,
      // Platform lines (START, REPORT, timeouts) in JSON too, so one Logs Insights query reads
      // them next to the Powertools logger's records.
      loggingFormat: LoggingFormat.JSON,
      bundling: SEND_BUNDLING,
      // HTTP APIs cannot start traces themselves, so the function's traces begin at Lambda.
      tracing: settings.tracing ? Tracing.ACTIVE : Tracing.DISABLED,
      // Every setting the function reads (functions/shared/config.ts), set explicitly so the
      // deployed values are visible in the template. AWS_REGION is set by Lambda itself;
      // DYNAMODB_ENDPOINT and SES_ENDPOINT are for the local stack and must stay unset here.
      environment: {
        TABLE_NAME: this.table.tableName,
        SES_CONFIGURATION_SET: this.configurationSet.configurationSetName,
        ...settings.serviceEnvironment,
        POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
        POWERTOOLS_TRACE_ENABLED: String(settings.tracing),
        NODE_OPTIONS: '--enable-source-maps',
      },
    });

    const accessLogs = new LogGroup(this, 'ApiAccessLogs', { retention: settings.logRetention });

    const integration = new HttpLambdaIntegration('SendIntegration', this.sendFunction);
    // The HTTP API has no default stage of its own: the stage below carries throttling, access
    // logs and the custom domain, which the built-in default stage cannot.
    this.api = new HttpApi(this, 'HttpApi', {
      description: 'Transactional email API',
      createDefaultStage: false,
      // `$default` sends every other method and path to the same function, which answers 405
      // (with Allow) and 404 as problem documents. Without it, API Gateway would answer those
      // itself with a bare {"message":"Not Found"}, breaking the contract's error format.
      defaultIntegration: integration,
    });
    const sendRoutes = this.api.addRoutes({ path: SEND_PATH, methods: [HttpMethod.POST], integration });

    const customDomain = settings.customDomain
      ? new DomainName(this, 'CustomDomain', {
          domainName: settings.customDomain.domainName,
          certificate: Certificate.fromCertificateArn(this, 'CustomDomainCertificate', settings.customDomain.certificateArn),
          securityPolicy: SecurityPolicy.TLS_1_2,
        })
      : undefined;

    this.stage = new HttpStage(this, 'DefaultStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      throttle: settings.throttle,
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        // No request headers or body: the Authorization header must never reach a log.
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            requestTime: '$context.requestTime',
            sourceIp: '$context.identity.sourceIp',
            userAgent: '$context.identity.userAgent',
            domainName: '$context.domainName',
            httpMethod: '$context.httpMethod',
            path: '$context.path',
            routeKey: '$context.routeKey',
            protocol: '$context.protocol',
            status: '$context.status',
            responseLength: '$context.responseLength',
            responseLatency: '$context.responseLatency',
            integrationLatency: '$context.integrationLatency',
            integrationStatus: '$context.integrationStatus',
            integrationError: '$context.integrationErrorMessage',
            error: '$context.error.message',
          }),
        ),
      },
      ...(customDomain && { domainMapping: { domainName: customDomain } }),
    });

    this.addAlarms(settings.alarms, settings.alarmTopicArn);

    new CfnOutput(this, 'SendUrl', {
      description: 'POST endpoint of the send API',
      value: `${this.stage.url}${SEND_PATH.slice(1)}`,
    });
    if (customDomain) {
      new CfnOutput(this, 'CustomDomainSendUrl', {
        description: 'POST endpoint on the custom domain (after its DNS record points at CustomDomainTarget)',
        value: `https://${customDomain.name}${SEND_PATH}`,
      });
      new CfnOutput(this, 'CustomDomainTarget', {
        description: 'Create a CNAME (or alias) record from the custom domain to this name',
        value: customDomain.regionalDomainName,
      });
    }
    new CfnOutput(this, 'TableName', {
      description: 'DynamoDB table; pass it to the admin CLI as --table',
      value: this.table.tableName,
    });
    new CfnOutput(this, 'Region', { description: 'Region; pass it to the admin CLI as --region', value: Aws.REGION });
    new CfnOutput(this, 'ConfigurationSetName', {
      description: 'SES configuration set applied to every message',
      value: this.configurationSet.configurationSetName,
    });

    this.acknowledgeNagFindings(sendRoutes, role, settings.tracing);
  }

  private addAlarms(thresholds: { serverErrorRatePercent: number; latencyP99Ms: number }, topicArn: string | undefined): void {
    const action: IAlarmAction | undefined = topicArn ? new SnsAction(Topic.fromTopicArn(this, 'AlarmTopic', topicArn)) : undefined;
    const period = Duration.minutes(1);
    const alarms: Alarm[] = [];

    // A rate, not a count, so the threshold means the same at 1 and 1000 requests a minute.
    // 502/503 are in it on purpose: the function answers them when SES or DynamoDB fail.
    const serverErrorRate = new MathExpression({
      label: '5xx responses (% of requests)',
      expression: 'IF(requests > 0, 100 * errors / requests, 0)',
      usingMetrics: {
        errors: this.api.metricServerError({ period, statistic: 'Sum' }),
        requests: this.api.metricCount({ period, statistic: 'Sum' }),
      },
      period,
    });
    alarms.push(
      new Alarm(this, 'ApiServerErrorRateAlarm', {
        alarmDescription: `More than ${thresholds.serverErrorRatePercent}% of API requests answered 5xx in 3 of the last 5 minutes`,
        metric: serverErrorRate,
        threshold: thresholds.serverErrorRatePercent,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 5,
        datapointsToAlarm: 3,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );

    // The handler turns every failure it foresees into a response, so an invocation error is a
    // crash, a timeout or a bad configuration: one is worth a look.
    alarms.push(
      new Alarm(this, 'FunctionErrorsAlarm', {
        alarmDescription: 'The send function failed (crash, timeout or invalid configuration)',
        metric: this.sendFunction.metricErrors({ period: Duration.minutes(5), statistic: 'Sum' }),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
    alarms.push(
      new Alarm(this, 'FunctionThrottlesAlarm', {
        alarmDescription: 'The send function was throttled (account or reserved concurrency exhausted)',
        metric: this.sendFunction.metricThrottles({ period: Duration.minutes(5), statistic: 'Sum' }),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
    alarms.push(
      new Alarm(this, 'ApiLatencyP99Alarm', {
        alarmDescription: `API p99 latency above ${thresholds.latencyP99Ms} ms for 15 minutes`,
        metric: this.api.metricLatency({ period: Duration.minutes(5), statistic: 'p99' }),
        threshold: thresholds.latencyP99Ms,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );

    if (action) {
      for (const alarm of alarms) {
        alarm.addAlarmAction(action);
        alarm.addOkAction(action);
      }
    }
  }

  /**
   * cdk-nag AwsSolutions findings that are deliberate. Each is scoped to the one construct it
   * concerns, and the infra tests pin the exact list, so a new one needs a reviewed change.
   */
  private acknowledgeNagFindings(sendRoutes: HttpRoute[], role: Role, tracing: boolean): void {
    const unauthenticatedRoute =
      'Authentication is the service\'s own: every request must carry "Authorization: Bearer <API key>", which the ' +
      'function checks against SHA-256 hashes in DynamoDB before it looks at the messages or sends anything, and ' +
      'answers 401/403 otherwise (CONTRACT section 3). An API Gateway authorizer would repeat that lookup on a second ' +
      'Lambda and add latency without adding a check.';
    for (const route of sendRoutes) {
      Validations.of(route).acknowledge({ id: 'AwsSolutions-APIG4', reason: unauthenticatedRoute });
    }
    const defaultRoute = this.api.node.findChild('DefaultRoute');
    Validations.of(defaultRoute).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        'The $default route only exists so that unknown paths and methods reach the function, which answers them with ' +
        '404/405 problem documents and sends nothing; the one route that acts, POST /v1.2/email/send, requires an API key.',
    });
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:identity/*]`,
      reason:
        'ses:SendEmail is checked against the sender identity, which each request chooses from its Organization\'s ' +
        'allowed senders (managed in DynamoDB with the admin CLI, checked by the function before sending). The wildcard ' +
        'is limited to identities of this account and region, the only action is ses:SendEmail, and SES refuses ' +
        'identities that are not verified.',
    });
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'ses:GetAccount (read the account\'s MaxSendRate, the budget sends are paced to) has no resource type in SES, ' +
        'so "*" is the only resource it takes; it reads account settings and nothing else.' +
        (tracing
          ? ' Active tracing adds xray:PutTraceSegments and xray:PutTelemetryRecords, which likewise support no ' +
            'resource-level permissions and only write trace data; turn tracing off with the "tracing" context key to drop them.'
          : ''),
    });
  }
}
