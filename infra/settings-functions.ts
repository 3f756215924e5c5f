/**
 * The settings page's two functions and their routes: the settings API (`/v1.2/me…`, behind
 * API Gateway's JWT authorizer, reading and writing only users, their e-mail items, keys and
 * Organization names) and the page's files (public, with no AWS access at all).
 */
import { Duration } from 'aws-cdk-lib';
import type { Stack } from 'aws-cdk-lib';
import { HttpMethod } from 'aws-cdk-lib/aws-apigatewayv2';
import type { HttpApi, HttpRoute } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpJwtAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import type { IHttpRouteAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { ME_ROUTES, SETTINGS_PAGE_ROUTES } from '../functions/shared/http/api-routes';
import type { ApiRoute } from '../functions/shared/http/api-routes';
import { DELIVERY_PARTITIONS, ORGANIZATION_NAME_ATTRIBUTES, PARTITIONS, TABLE_SCHEMA, USER_KEY_FIELDS } from '../functions/shared/store/table';
import { ME_ENTRY, SETTINGS_PAGE_BUNDLING, SETTINGS_PAGE_ENTRY } from './send-bundle';
import type { ServiceFunction } from './service-function';
import { addServiceFunction, inPartitions, onlyAttributes } from './service-function';
import type { StackSettings } from './settings';
import type { SignIn } from './sign-in';

export interface SettingsParts {
  readonly api: ServiceFunction;
  readonly page: ServiceFunction;
  readonly apiRoutes: HttpRoute[];
  readonly pageRoutes: HttpRoute[];
}

function addRoutes(api: HttpApi, routes: readonly ApiRoute[], fn: IFunction, id: string, authorizer?: IHttpRouteAuthorizer): HttpRoute[] {
  const integration = new HttpLambdaIntegration(id, fn);
  return routes.flatMap((route) =>
    api.addRoutes({ path: route.path, methods: route.methods.map((method) => HttpMethod[method as keyof typeof HttpMethod]), integration, ...(authorizer && { authorizer }) }),
  );
}

export function addSettings(stack: Stack, table: Table, api: HttpApi, settings: StackSettings, signIn: SignIn): SettingsParts {
  const problemTypeBase = settings.serviceEnvironment.PROBLEM_TYPE_BASE!;
  const settingsApi = addServiceFunction(stack, 'SettingsApiFunction', settings, {
    description: 'GET /v1.2/me, POST|DELETE /v1.2/me/api-key, POST /v1.2/me/api-key/rotate: the signed-in user\'s own key and Organizations',
    roleDescription: 'Settings API: read users and Organization names, write the signed-in user\'s key, write its own logs',
    entry: ME_ENTRY,
    statements: [
      new PolicyStatement({
        sid: 'ReadUsers',
        // The user by e-mail (the e-mail item, then the user item).
        actions: ['dynamodb:GetItem'],
        resources: [table.tableArn],
        conditions: inPartitions(PARTITIONS.email, PARTITIONS.user),
      }),
      new PolicyStatement({
        sid: 'WriteOwnKeyFields',
        // The key fields of the user item, with a condition that commits each key change: never
        // its e-mail address or memberships, and nothing returned.
        actions: ['dynamodb:UpdateItem'],
        resources: [table.tableArn],
        conditions: { ...inPartitions(PARTITIONS.user), ...onlyAttributes([TABLE_SCHEMA.partitionKey, TABLE_SCHEMA.sortKey, ...USER_KEY_FIELDS]) },
      }),
      new PolicyStatement({
        sid: 'KeyItems',
        // The key's hash item: made on generate/rotate, removed on rotate/revoke. Never read.
        actions: ['dynamodb:PutItem', 'dynamodb:DeleteItem'],
        resources: [table.tableArn],
        conditions: inPartitions(PARTITIONS.apiKey),
      }),
      new PolicyStatement({
        sid: 'ReadOrganizationNames',
        // Names, members and pauses only: not senders, limits or anything else an Organization item holds.
        actions: ['dynamodb:BatchGetItem'],
        resources: [table.tableArn],
        conditions: { ...inPartitions(PARTITIONS.organization), ...onlyAttributes(ORGANIZATION_NAME_ATTRIBUTES) },
      }),
      new PolicyStatement({
        sid: 'ReadReputationCounters',
        // The member Organizations' bounce and complaint counters, for their reputation.
        actions: ['dynamodb:BatchGetItem'],
        resources: [table.tableArn],
        conditions: inPartitions(DELIVERY_PARTITIONS.reputation),
      }),
    ],
    serviceName: 'email-send-api-settings',
    memorySize: 512,
    timeout: Duration.seconds(10),
    environment: { TABLE_NAME: table.tableName, OIDC_ISSUER: signIn.issuer, PROBLEM_TYPE_BASE: problemTypeBase },
  });
  const page = addServiceFunction(stack, 'SettingsPageFunction', settings, {
    description: 'GET /settings: the settings page\'s files',
    roleDescription: 'Settings page: write its own logs, nothing else',
    entry: SETTINGS_PAGE_ENTRY,
    statements: [],
    serviceName: 'email-send-api-settings-page',
    memorySize: 256,
    timeout: Duration.seconds(5),
    bundling: SETTINGS_PAGE_BUNDLING,
    environment: {
      OIDC_ISSUER: signIn.issuer,
      OIDC_CLIENT_ID: signIn.clientId,
      ...(signIn.logoutUrl && { OIDC_LOGOUT_URL: signIn.logoutUrl }),
      OIDC_CONNECT_ORIGINS: signIn.connectOrigins.join(' '),
      PROBLEM_TYPE_BASE: problemTypeBase,
    },
  });

  // API Gateway checks signature (against the issuer's JWKS), issuer, audience and expiry before
  // the function runs; an API key, or anything else, gets 401 there.
  const authorizer = new HttpJwtAuthorizer('SettingsAuthorizer', signIn.issuer, { jwtAudience: [signIn.clientId], identitySource: ['$request.header.Authorization'] });
  return {
    api: settingsApi,
    page,
    apiRoutes: addRoutes(api, ME_ROUTES, settingsApi.fn, 'SettingsApiIntegration', authorizer),
    pageRoutes: addRoutes(api, SETTINGS_PAGE_ROUTES, page.fn, 'SettingsPageIntegration'),
  };
}
