/**
 * The settings page's two functions and their routes: the settings API (`/v1.2/me…`, behind
 * API Gateway's JWT authorizer, reading and writing only users, their e-mail items, keys,
 * Organization names and limits, today's use, the Activity rows, the suppression lists and the
 * templates (read only), and sealing and opening API keys with the stack's KMS key under a
 * `userId` encryption context only) and the page's files (public, with no AWS access at all).
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
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { ME_ROUTES, SETTINGS_PAGE_ROUTES } from '../../functions/shared/http/api-routes';
import type { ApiRoute } from '../../functions/shared/http/api-routes';
import { ACTIVITY_PARTITIONS, DELIVERY_PARTITIONS, LAST_USED_ATTRIBUTE, ORGANIZATION_NAME_ATTRIBUTES, PARTITIONS, SCHEDULE_PARTITION, SUPPRESSION_COUNT_ATTRIBUTE, TABLE_SCHEMA, TEMPLATE_PARTITION, USER_KEY_FIELDS } from '../../functions/shared/store/table';
import { ME_ENTRY, SETTINGS_PAGE_BUNDLING, SETTINGS_PAGE_ENTRY } from './send-bundle';
import type { ServiceFunction } from './service-function';
import { addServiceFunction, inPartitions, onlyAttributes } from './service-function';
import type { StackSettings } from './settings';
import type { SignIn } from './sign-in';
import type { Cancelling } from './scheduled-send';

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

/**
 * KMS use bound to a user: the encryption context must name a `userId` and nothing else, so this
 * role can seal and open API keys but not, say, a webhook secret (bound to an `organizationId`).
 */
export const USER_BOUND_CONTEXT = {
  'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['userId'] },
  Null: { 'kms:EncryptionContext:userId': 'false' },
};

/**
 * `sealingKey`: the stack's KMS key, which seals API keys while reveal is on; `cancelling`: what
 * a schedule cancelled on the page (or with its key) needs to be disarmed and told of.
 */
export function addSettings(stack: Stack, table: Table, api: HttpApi, settings: StackSettings, signIn: SignIn, sealingKey: IKey, cancelling: Cancelling): SettingsParts {
  const problemTypeBase = settings.serviceEnvironment.PROBLEM_TYPE_BASE!;
  const reveal = settings.apiKeyReveal;
  const settingsApi = addServiceFunction(stack, 'SettingsApiFunction', settings, {
    description: 'GET /v1.2/me, GET|POST|DELETE /v1.2/me/api-key, POST /v1.2/me/api-key/rotate, GET /v1.2/me/messages, GET|DELETE /v1.2/me/suppressions, GET|DELETE /v1.2/me/schedules, GET /v1.2/me/templates, POST /v1.2/me/templates/{Name}/render',
    roleDescription: 'Settings API: read users, Organizations, their use, Activity, suppressions and templates; write the user\'s key; remove suppressions; cancel scheduled messages, delete their schedules, queue their webhooks; seal/open keys; logs',
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
        sid: 'ReadKeyLastUse',
        // When the user's key was last used, shown on the page: that attribute of the key item, nothing else.
        actions: ['dynamodb:GetItem'],
        resources: [table.tableArn],
        conditions: { ...inPartitions(PARTITIONS.apiKey), ...onlyAttributes([TABLE_SCHEMA.partitionKey, TABLE_SCHEMA.sortKey, LAST_USED_ATTRIBUTE]) },
      }),
      new PolicyStatement({
        sid: 'ReadOrganizationNames',
        // Names, members, pauses, limits and senders (a key may be limited to some of them) only: nothing else an Organization item holds.
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
      new PolicyStatement({
        sid: 'ReadTodaysUse',
        // The daily quota's counters (store/dynamodb-daily-usage.ts), not the send-rate budget.
        actions: ['dynamodb:GetItem'],
        resources: [table.tableArn],
        conditions: inPartitions(`${PARTITIONS.sendBudget}day#`),
      }),
      new PolicyStatement({
        sid: 'ReadActivity',
        actions: ['dynamodb:Query'],
        resources: [table.tableArn],
        conditions: inPartitions(ACTIVITY_PARTITIONS.organization, ACTIVITY_PARTITIONS.recipient),
      }),
      new PolicyStatement({
        sid: 'ScheduledMessages',
        // Activity's waiting schedules and Cancel, and the schedules a revoked or rotated key made
        // (functions/shared/schedules/key-schedules.ts): read, cancel, give their places back.
        actions: ['dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
        resources: [table.tableArn],
        conditions: inPartitions(SCHEDULE_PARTITION),
      }),
      // Their timers deleted and their `email.cancelled` webhooks queued, as the cancel function does.
      ...cancelling.statements,
      new PolicyStatement({
        sid: 'SuppressionLists',
        // List a member Organization's suppressed addresses, and take one off (as "suppression remove").
        actions: ['dynamodb:Query', 'dynamodb:DeleteItem'],
        resources: [table.tableArn],
        conditions: inPartitions(DELIVERY_PARTITIONS.suppression),
      }),
      new PolicyStatement({
        sid: 'ReadTemplates',
        // The Templates panel: list a member Organization's templates, read a version (and its
        // parts) for a preview. Never save or delete one: that takes an API key or the admin CLI.
        actions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'],
        resources: [table.tableArn],
        conditions: inPartitions(TEMPLATE_PARTITION),
      }),
      new PolicyStatement({
        sid: 'SuppressionCount',
        // Only the count on the Organization item: not its members, senders, name or limits.
        actions: ['dynamodb:UpdateItem'],
        resources: [table.tableArn],
        conditions: {
          ...inPartitions(PARTITIONS.organization),
          'ForAllValues:StringEquals': { 'dynamodb:Attributes': [TABLE_SCHEMA.partitionKey, TABLE_SCHEMA.sortKey, SUPPRESSION_COUNT_ATTRIBUTE] },
          StringEqualsIfExists: { 'dynamodb:ReturnValues': ['NONE'] },
        },
      }),
      ...(reveal
        ? [
            new PolicyStatement({
              sid: 'SealAndOpenOwnKeys',
              actions: ['kms:Encrypt', 'kms:Decrypt'],
              resources: [sealingKey.keyArn],
              conditions: USER_BOUND_CONTEXT,
            }),
          ]
        : []),
    ],
    serviceName: 'email-send-api-settings',
    memorySize: 512,
    timeout: Duration.seconds(10),
    environment: {
      TABLE_NAME: table.tableName,
      OIDC_ISSUER: signIn.issuer,
      PROBLEM_TYPE_BASE: problemTypeBase,
      API_KEY_REVEAL: String(reveal),
      ...(reveal && { API_KEY_KMS_KEY_ID: sealingKey.keyArn }),
      ...cancelling.environment,
    },
  });
  const page = addServiceFunction(stack, 'SettingsPageFunction', settings, {
    description: 'GET and HEAD /settings and /problems: the settings page\'s files and the problem type pages',
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
      API_KEY_REVEAL: String(reveal),
    },
  });

  // API Gateway checks signature (against the issuer's JWKS), issuer, audience and expiry before
  // the function runs; an API key, or anything else, gets 401 there. An ID token passes those
  // checks (its audience is the client too): the function refuses it (functions/shared/auth/token-kind.ts).
  const authorizer = new HttpJwtAuthorizer('SettingsAuthorizer', signIn.issuer, { jwtAudience: [signIn.clientId], identitySource: ['$request.header.Authorization'] });
  return {
    api: settingsApi,
    page,
    apiRoutes: addRoutes(api, ME_ROUTES, settingsApi.fn, 'SettingsApiIntegration', authorizer),
    pageRoutes: addRoutes(api, SETTINGS_PAGE_ROUTES, page.fn, 'SettingsPageIntegration'),
  };
}
