/**
 * A function of the service with everything it carries: its own log group, its own role with
 * exactly the statements it is given, and the NodejsFunction with the service's defaults
 * (arm64, the newest Node runtime, JSON logs, tracing as set, source maps). The send function,
 * the settings API and the settings page are each one of these.
 *
 * A function, not a Construct subclass, on purpose: it creates its resources in the stack's own
 * scope, so their logical IDs stay those of the first deployments (`<id>Logs`, `<id>Role`, `<id>`;
 * a new ID for the send function's role or log group would make CloudFormation replace them).
 */
import type { Duration, Stack } from 'aws-cdk-lib';
import type { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { PolicyStatement as Statement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, LoggingFormat, Tracing } from 'aws-cdk-lib/aws-lambda';
import type { BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { LAST_USED_ATTRIBUTE, PARTITIONS, TABLE_SCHEMA, USER_KEY_ATTRIBUTES } from '../../functions/shared/store/table';
import { LOCK_FILE, REPO_ROOT, SEND_RUNTIME, splitBundling } from './send-bundle';
import type { StackSettings } from './settings';
import { powertoolsTraceEnabled } from './settings';

export interface ServiceFunctionProps {
  readonly entry: string;
  readonly description: string;
  readonly roleDescription: string;
  /** What the function may do besides writing its own logs (and traces, when tracing is on). */
  readonly statements: readonly PolicyStatement[];
  readonly environment: Readonly<Record<string, string>>;
  /** Powertools' service name, on every log line and metric. */
  readonly serviceName: string;
  readonly memorySize: number;
  readonly timeout: Duration;
  readonly bundling?: BundlingOptions;
}

export interface ServiceFunction {
  readonly fn: NodejsFunction;
  readonly role: Role;
}

export function addServiceFunction(stack: Stack, id: string, settings: StackSettings, props: ServiceFunctionProps): ServiceFunction {
  const logGroup = new LogGroup(stack, `${id}Logs`, { retention: settings.logRetention });
  // A role of its own instead of the default one: the default attaches the managed
  // AWSLambdaBasicExecutionRole, whose log permissions apply to every log group in the account.
  const role = new Role(stack, `${id}Role`, { assumedBy: new ServicePrincipal('lambda.amazonaws.com'), description: props.roleDescription });
  role.addToPolicy(
    new Statement({
      sid: 'WriteOwnLogs',
      actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
      // A log group's ARN attribute ends in `:*`, which covers that group's streams only.
      resources: [logGroup.logGroupArn],
    }),
  );
  for (const statement of props.statements) role.addToPolicy(statement);

  const fn = new NodejsFunction(stack, id, {
    description: props.description,
    entry: props.entry,
    handler: 'handler',
    projectRoot: REPO_ROOT,
    depsLockFilePath: LOCK_FILE,
    runtime: SEND_RUNTIME,
    architecture: Architecture.ARM_64,
    memorySize: props.memorySize,
    timeout: props.timeout,
    role,
    logGroup,
    // Platform lines (START, REPORT, timeouts) in JSON too, so one Logs Insights query reads
    // them next to the Powertools logger's records.
    loggingFormat: LoggingFormat.JSON,
    bundling: props.bundling ?? splitBundling(props.entry),
    // HTTP APIs cannot start traces themselves, so a function's traces begin at Lambda.
    tracing: settings.tracing ? Tracing.ACTIVE : Tracing.DISABLED,
    // Every setting the function reads, set explicitly so the deployed values are visible in the
    // template. AWS_REGION is set by Lambda itself; the *_ENDPOINT overrides are for the local
    // stack and must stay unset here.
    environment: {
      ...props.environment,
      POWERTOOLS_SERVICE_NAME: props.serviceName,
      POWERTOOLS_TRACE_ENABLED: String(powertoolsTraceEnabled(settings)),
      // No NODE_OPTIONS=--enable-source-maps: Node would read and measure every start-up file's
      // map at each cold start (about a fifth of it). The logger maps a logged error's stack from
      // the same maps when it writes it (functions/shared/runtime/source-mapped-errors.ts).
    },
  });
  return { fn, role };
}

/** Items in these partitions only (a `dynamodb:LeadingKeys` condition on the table's items). */
export const inPartitions = (...prefixes: string[]) => ({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': prefixes.map((prefix) => `${prefix}*`) } });

/**
 * These attributes of the items and no others (`dynamodb:Attributes`): a read must name them
 * (`Select`: a projection, never whole items), a write may return nothing it was not allowed to touch.
 */
export const onlyAttributes = (attributes: readonly string[]) => ({
  'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...attributes] },
  StringEqualsIfExists: { 'dynamodb:Select': ['SPECIFIC_ATTRIBUTES'], 'dynamodb:ReturnValues': ['NONE'] },
});

/**
 * Every API-key function's check that a key's user still holds it (dynamodb-access-store.ts):
 * the `keyHash` of user items and the limits stored beside it, nothing else of them (not their
 * e-mail addresses).
 */
export function readKeyHolders(table: ITable): PolicyStatement {
  return new Statement({
    sid: 'ReadKeyHolders',
    actions: ['dynamodb:BatchGetItem'],
    resources: [table.tableArn],
    conditions: { ...inPartitions(PARTITIONS.user), ...onlyAttributes(USER_KEY_ATTRIBUTES) },
  });
}

/**
 * Every API-key function's record of a key's last use (at most one write per key and hour): the
 * `lastUsedAt` attribute of key items and nothing else, so it can never move a key to another user.
 */
export function recordKeyUse(table: ITable): PolicyStatement {
  return new Statement({
    sid: 'RecordKeyUse',
    actions: ['dynamodb:UpdateItem'],
    resources: [table.tableArn],
    conditions: { ...inPartitions(PARTITIONS.apiKey), ...onlyAttributes([TABLE_SCHEMA.partitionKey, TABLE_SCHEMA.sortKey, LAST_USED_ATTRIBUTE]) },
  });
}
