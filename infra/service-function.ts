/**
 * A function of the delivery lifecycle (status, events, webhook delivery) with what the send
 * function has too: its own log group, its own role holding exactly the statements given (no
 * managed policies), Node.js 24 on arm64, the send function's bundling, JSON logs, and the
 * service's settings in its environment. Created in the stack's own scope, like the send function.
 */
import type { Duration, Stack } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import type { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { PolicyStatement as Statement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { REPO_ROOT } from './send-bundle';
import { functionBasics, runtimeEnvironment } from './send-function';

export { inPartitions } from './send-function';
import type { StackSettings } from './settings';

export interface ServiceFunctionProps {
  /** Logical id of the function; its role and log group get `<id>Role` and `<id>Logs`. */
  readonly id: string;
  readonly entry: string;
  readonly description: string;
  readonly timeout: Duration;
  readonly memoryMb: number;
  readonly statements: readonly PolicyStatement[];
  readonly environment: Readonly<Record<string, string>>;
}

export interface ServiceFunction {
  readonly fn: NodejsFunction;
  readonly role: Role;
}

export function addServiceFunction(stack: Stack, table: Table, settings: StackSettings, props: ServiceFunctionProps): ServiceFunction {
  const logGroup = new LogGroup(stack, `${props.id}Logs`, { retention: settings.logRetention });
  const role = new Role(stack, `${props.id}Role`, { assumedBy: new ServicePrincipal('lambda.amazonaws.com'), description: props.description });
  role.addToPolicy(new Statement({ sid: 'WriteOwnLogs', actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [logGroup.logGroupArn] }));
  for (const statement of props.statements) role.addToPolicy(statement);
  const fn = new NodejsFunction(stack, props.id, {
    ...functionBasics(settings),
    description: props.description,
    entry: props.entry,
    memorySize: props.memoryMb,
    timeout: props.timeout,
    role,
    logGroup,
    environment: { TABLE_NAME: table.tableName, ...settings.serviceEnvironment, ...props.environment, ...runtimeEnvironment(settings) },
  });
  return { fn, role };
}

export const functionEntry = (name: 'events' | 'status' | 'webhooks') => `${REPO_ROOT}functions/${name}/index.ts`;
