/**
 * The send function with everything it carries: its own log group, its own role with exactly the
 * statements it needs, and the NodejsFunction with the service's settings.
 *
 * A function, not a Construct subclass, on purpose: it creates its resources in the stack's own
 * scope, so their logical IDs are those of the first deployments (a new ID for the role or the log
 * group would make CloudFormation replace them).
 */
import { Duration } from 'aws-cdk-lib';
import type { Stack } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, LoggingFormat, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { ConfigurationSet } from 'aws-cdk-lib/aws-ses';
import { SEND_PATH } from '../functions/send/route';
import { DELIVERY_PARTITIONS, SEND_FUNCTION_PARTITIONS } from '../functions/shared/store/table';
import { LOCK_FILE, REPO_ROOT, SEND_BUNDLING, SEND_ENTRY, SEND_RUNTIME } from './send-bundle';
import type { StackSettings } from './settings';

export const SERVICE_NAME = 'email-send-api';

/**
 * API Gateway gives up on an integration after 30 s and answers a bare 503. Cold-start
 * initialisation counts against those 30 s but not against the function's timeout, so the
 * function stops at 28 s; its own deadline (remaining time minus a margin) then always lets it
 * answer with the contract's response first.
 */
const FUNCTION_TIMEOUT = Duration.seconds(28);

export interface SendFunction {
  readonly fn: NodejsFunction;
  readonly role: Role;
}

/** Items in these partitions only: the function can never write a key, user or Organization item, nor read a user's. */
export const inPartitions = (...prefixes: string[]) => ({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': prefixes.map((prefix) => `${prefix}*`) } });

export function addSendFunction(stack: Stack, table: Table, configurationSet: ConfigurationSet, settings: StackSettings): SendFunction {
  const logGroup = new LogGroup(stack, 'SendFunctionLogs', { retention: settings.logRetention });

  // A role of our own instead of the default one: the default attaches the managed
  // AWSLambdaBasicExecutionRole, whose log permissions apply to every log group in the account.
  const role = new Role(stack, 'SendFunctionRole', {
    assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
    description: 'Send function: read access records, send through SES, write its own logs',
  });
  const configurationSetArn = stack.formatArn({ service: 'ses', resource: 'configuration-set', resourceName: configurationSet.configurationSetName });
  const statements: PolicyStatement[] = [
    new PolicyStatement({
      sid: 'WriteOwnLogs',
      actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
      // A log group's ARN attribute ends in `:*`, which covers that group's streams only.
      resources: [logGroup.logGroupArn],
    }),
    new PolicyStatement({
      sid: 'ReadAccessRecords',
      // Authentication reads API key items and Organization items, and the suppression list of an
      // Organization that has one; nothing else: not users (their e-mail addresses), not other
      // callers' idempotent responses, not webhook secrets.
      actions: ['dynamodb:BatchGetItem'],
      resources: [table.tableArn],
      conditions: inPartitions(SEND_FUNCTION_PARTITIONS.apiKey, SEND_FUNCTION_PARTITIONS.organization, DELIVERY_PARTITIONS.suppression),
    }),
    new PolicyStatement({
      sid: 'IdempotencyRecords',
      // Idempotency records and their per-message checkpoints: read, write and query.
      actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:Query'],
      resources: [table.tableArn],
      conditions: inPartitions(SEND_FUNCTION_PARTITIONS.idempotency),
    }),
    new PolicyStatement({
      sid: 'SendRateBudget',
      // The account's send-rate budget, shared by every instance: one item, read and moved on
      // with conditional writes.
      actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
      resources: [table.tableArn],
      conditions: inPartitions(SEND_FUNCTION_PARTITIONS.sendBudget),
    }),
    new PolicyStatement({
      sid: 'ReadSendQuota',
      // GetAccount gives the account's MaxSendRate, the budget the function paces to. SES
      // defines no resource type for it, so "*" is the only resource it takes; it only reads.
      actions: ['ses:GetAccount'],
      resources: ['*'],
    }),
    new PolicyStatement({
      sid: 'SendEmail',
      // SES v2 SendEmail authorises the sending identity and, when one is named, the
      // configuration set; both must be listed. Which identity an Organization may use is the
      // service's decision (its sender list), so every identity of this account and region is
      // allowed here, and SES itself refuses identities that are not verified.
      actions: ['ses:SendEmail'],
      resources: [stack.formatArn({ service: 'ses', resource: 'identity', resourceName: '*' }), configurationSetArn],
    }),
  ];
  for (const statement of statements) role.addToPolicy(statement);

  const fn = new NodejsFunction(stack, 'SendFunction', {
    ...functionBasics(settings),
    description: `POST ${SEND_PATH}: validate, authorise and send through Amazon SES`,
    entry: SEND_ENTRY,
    // CPU scales with memory, and this function's cost is CPU more than memory: TLS handshakes
    // to DynamoDB and SES on a cold start, parsing and validating up to 5 MiB of JSON, building
    // up to 100 MIME messages, and SEND_CONCURRENCY SES calls in flight. 1024 MB (about 0.6 vCPU)
    // keeps that well inside the API deadline; the heap needs far less.
    memorySize: settings.functionMemoryMb,
    timeout: FUNCTION_TIMEOUT,
    role,
    logGroup,
    // Every setting the function reads (functions/shared/runtime/config.ts), set explicitly so
    // the deployed values are visible in the template. AWS_REGION is set by Lambda itself;
    // DYNAMODB_ENDPOINT and SES_ENDPOINT are for the local stack and must stay unset here.
    environment: {
      TABLE_NAME: table.tableName,
      SES_CONFIGURATION_SET: configurationSet.configurationSetName,
      ...settings.serviceEnvironment,
      ...runtimeEnvironment(settings),
    },
  });
  return { fn, role };
}

/** What every function of the stack runs on and how it is built, traced and logs. */
export function functionBasics(settings: StackSettings) {
  return {
    handler: 'handler',
    projectRoot: REPO_ROOT,
    depsLockFilePath: LOCK_FILE,
    runtime: SEND_RUNTIME,
    architecture: Architecture.ARM_64,
    // Platform lines (START, REPORT, timeouts) in JSON too, so one Logs Insights query reads
    // them next to the Powertools logger's records.
    loggingFormat: LoggingFormat.JSON,
    bundling: SEND_BUNDLING,
    // HTTP APIs and SQS cannot start traces themselves, so each function's traces begin at Lambda.
    tracing: settings.tracing ? Tracing.ACTIVE : Tracing.DISABLED,
  };
}

/** The Powertools and Node settings every function of the stack gets. */
export function runtimeEnvironment(settings: StackSettings): Record<string, string> {
  return { POWERTOOLS_SERVICE_NAME: SERVICE_NAME, POWERTOOLS_TRACE_ENABLED: String(settings.tracing), NODE_OPTIONS: '--enable-source-maps' };
}
