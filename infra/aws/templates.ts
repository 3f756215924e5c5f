/**
 * Templates in the stack (CONTRACT section 14): the templates function behind
 * `/v1.2/templates…`, routes of the same HTTP API (no authorizer: the function checks the API
 * key, as the send, status and cancel functions do), and the send function's read of a version.
 * Each role gets exactly what its function does with the `TPL#` partitions: the templates
 * function reads, writes and deletes them; the send function only reads.
 */
import { Duration } from 'aws-cdk-lib';
import type { Stack } from 'aws-cdk-lib';
import type { HttpApi, HttpRoute } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpMethod } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { TEMPLATE_ROUTES } from '../../functions/shared/http/api-routes';
import { PARTITIONS, TEMPLATE_PARTITION } from '../../functions/shared/store/table';
import { TEMPLATES_ENTRY } from './send-bundle';
import type { ServiceFunction } from './service-function';
import { addServiceFunction, inPartitions, readKeyHolders, recordKeyUse } from './service-function';
import type { StackSettings } from './settings';

export interface Templates {
  readonly function: ServiceFunction;
  readonly routes: HttpRoute[];
}

/** What the send function needs of templates: a version (its head, or a numbered one) and its parts. */
export function readTemplates(table: ITable): PolicyStatement {
  return new PolicyStatement({ sid: 'ReadTemplates', actions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem'], resources: [table.tableArn], conditions: inPartitions(TEMPLATE_PARTITION) });
}

export function addTemplates(stack: Stack, table: ITable, api: HttpApi, settings: StackSettings): Templates {
  const fn = addServiceFunction(stack, 'TemplatesFunction', settings, {
    entry: TEMPLATES_ENTRY,
    description: 'The /v1.2/templates endpoints: save, read, list, delete and render an Organization\'s templates',
    roleDescription: 'Templates function: read access records, read and write the Organizations\' templates, write its own logs',
    serviceName: 'email-send-api-templates',
    // Compiling and checking a 512 KB template is CPU work; a render is bounded by its step budget.
    memorySize: 512,
    timeout: Duration.seconds(10),
    environment: { TABLE_NAME: table.tableName, ...settings.serviceEnvironment },
    statements: [
      new PolicyStatement({ sid: 'ReadAccessRecords', actions: ['dynamodb:BatchGetItem'], resources: [table.tableArn], conditions: inPartitions(PARTITIONS.apiKey, PARTITIONS.organization) }),
      readKeyHolders(table),
      recordKeyUse(table),
      new PolicyStatement({
        sid: 'Templates',
        actions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'],
        resources: [table.tableArn],
        conditions: inPartitions(TEMPLATE_PARTITION),
      }),
    ],
  });
  const integration = new HttpLambdaIntegration('TemplatesIntegration', fn.fn);
  const routes = TEMPLATE_ROUTES.flatMap((route) => api.addRoutes({ path: route.path, methods: route.methods.map((method) => method as HttpMethod), integration }));
  return { function: fn, routes };
}
