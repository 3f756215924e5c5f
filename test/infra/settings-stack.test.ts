/**
 * The settings page's parts of the stack: the user pool and its client, the JWT authorizer on
 * exactly the /v1.2/me routes, the two functions' roles (the API: its own user, key and
 * Organization items; the page: its logs only), the outputs, and the external-issuer variant.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { loadPageConfig } from '../../functions/settings-page/config';
import { ME_ROUTES, SETTINGS_PAGE_ROUTES } from '../../functions/shared/http/api-routes';
import { buildStack } from './support';

type Json = Record<string, any>;

const logicalId = (stack: Stack, construct: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId(construct.node.defaultChild as Parameters<Stack['getLogicalId']>[0]);

function routeKeys(template: Template): Map<string, Json> {
  const routes = Object.values(template.findResources('AWS::ApiGatewayV2::Route')) as Json[];
  return new Map(routes.map((route) => [route.Properties.RouteKey as string, route.Properties]));
}

function policyOf(template: Template, roleId: string): Json[] {
  const policies = Object.values(template.findResources('AWS::IAM::Policy')).filter((each) => JSON.stringify(each.Properties.Roles) === JSON.stringify([{ Ref: roleId }]));
  expect(policies).toHaveLength(1);
  return (policies[0] as Json).Properties.PolicyDocument.Statement;
}

const leadingKeys = (...prefixes: string[]) => ({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': prefixes.map((p) => `${p}*`) } });
const onlyAttributes = (...attributes: string[]) => ({
  'ForAllValues:StringEquals': { 'dynamodb:Attributes': attributes },
  StringEqualsIfExists: { 'dynamodb:Select': ['SPECIFIC_ATTRIBUTES'], 'dynamodb:ReturnValues': ['NONE'] },
});

describe('settings page in the stack (its own Cognito user pool)', () => {
  let stack: Stack;
  let template: Template;
  let ids: Record<'group' | 'scheduleQueue' | 'webhookQueue' | 'table' | 'apiRole' | 'pageRole' | 'apiLogs' | 'pageLogs' | 'pool' | 'client' | 'api' | 'apiFn' | 'pageFn' | 'key' | 'sendRole' | 'eventsRole' | 'webhookRole', string>;

  beforeAll(() => {
    ({ stack } = buildStack({ tracing: false }));
    template = Template.fromStack(stack);
    const child = (id: string) => logicalId(stack, stack.node.findChild(id) as never);
    ids = {
      table: child('Table'),
      // Named at synth (`<stack>-ScheduleGroup-<hash>`), not a reference.
      group: stack.resolve((stack.node.findChild('ScheduleGroup') as unknown as { scheduleGroupName: string }).scheduleGroupName),
      scheduleQueue: child('ScheduleQueue'),
      webhookQueue: child('WebhookQueue'),
      apiRole: child('SettingsApiFunctionRole'),
      pageRole: child('SettingsPageFunctionRole'),
      apiLogs: child('SettingsApiFunctionLogs'),
      pageLogs: child('SettingsPageFunctionLogs'),
      pool: child('UserPool'),
      client: logicalId(stack, stack.node.findChild('UserPool').node.findChild('SettingsPageClient') as never),
      api: child('HttpApi'),
      apiFn: child('SettingsApiFunction'),
      pageFn: child('SettingsPageFunction'),
      key: child('WebhookSecretsKey'),
      sendRole: child('SendFunctionRole'),
      eventsRole: child('EventsFunctionRole'),
      webhookRole: child('WebhookFunctionRole'),
    };
  });

  it('makes a user pool with self sign-up off, e-mail sign-in, a strong password policy and deletion protection', () => {
    template.hasResource('AWS::Cognito::UserPool', {
      DeletionPolicy: 'Retain',
      Properties: Match.objectLike({
        AdminCreateUserConfig: { AllowAdminCreateUserOnly: true, InviteMessageTemplate: Match.anyValue() },
        UsernameAttributes: ['email'],
        AutoVerifiedAttributes: ['email'],
        DeletionProtection: 'ACTIVE',
        MfaConfiguration: 'OPTIONAL',
        Policies: { PasswordPolicy: Match.objectLike({ MinimumLength: 12, RequireSymbols: true, TemporaryPasswordValidityDays: 7 }) },
      }),
    });
  });

  it('gives the page a public client: code flow with PKCE (no secret), openid and email scopes, callback and sign-out on the settings URL', () => {
    const client = template.toJSON().Resources[ids.client].Properties as Json;
    expect(client.GenerateSecret).toBe(false);
    expect(client.AllowedOAuthFlows).toEqual(['code']);
    expect(client.AllowedOAuthScopes).toEqual(['openid', 'email']);
    expect(client.SupportedIdentityProviders).toEqual(['COGNITO']);
    const settingsUrl = { 'Fn::Join': ['', [{ 'Fn::GetAtt': [ids.api, 'ApiEndpoint'] }, '/settings']] };
    expect(client.CallbackURLs).toEqual([settingsUrl]);
    expect(client.LogoutURLs).toEqual([settingsUrl]);
    template.hasResourceProperties('AWS::Cognito::UserPoolDomain', { ManagedLoginVersion: 2, UserPoolId: { Ref: ids.pool } });
    template.hasResourceProperties('AWS::Cognito::ManagedLoginBranding', { UseCognitoProvidedValues: true, ClientId: { Ref: ids.client } });
  });

  it('checks tokens with a JWT authorizer for the pool\'s issuer and the page\'s client, on the /v1.2/me routes only', () => {
    const authorizers = Object.entries(template.findResources('AWS::ApiGatewayV2::Authorizer')) as [string, Json][];
    expect(authorizers).toHaveLength(1);
    const [authorizerId, authorizer] = authorizers[0]!;
    expect(authorizer.Properties).toMatchObject({
      AuthorizerType: 'JWT',
      IdentitySource: ['$request.header.Authorization'],
      JwtConfiguration: { Audience: [{ Ref: ids.client }], Issuer: { 'Fn::GetAtt': [ids.pool, 'ProviderURL'] } },
    });
    const routes = routeKeys(template);
    const meKeys = ME_ROUTES.flatMap((route) => route.methods.map((method) => `${method} ${route.path}`));
    const pageKeys = SETTINGS_PAGE_ROUTES.flatMap((route) => route.methods.map((method) => `${method} ${route.path}`));
    expect(meKeys.length).toBeGreaterThan(3);
    for (const [key, route] of routes) {
      if (meKeys.includes(key)) expect(route).toMatchObject({ AuthorizationType: 'JWT', AuthorizerId: { Ref: authorizerId } });
      else expect(route.AuthorizationType ?? 'NONE').toBe('NONE');
    }
    for (const key of [...meKeys, ...pageKeys]) expect(routes.has(key)).toBe(true);
  });

  it('lets the settings API read users, Organization names, pauses and limits, their reputation counters, today\'s use, Activity, suppressions and templates (never write one), write the key fields and key items, remove suppressions, cancel schedules (deleting their timers, queueing their webhooks), seal and open user-bound keys, and nothing more', () => {
    const table = { 'Fn::GetAtt': [ids.table, 'Arn'] };
    expect(policyOf(template, ids.apiRole)).toEqual([
      { Sid: 'WriteOwnLogs', Effect: 'Allow', Action: ['logs:CreateLogStream', 'logs:PutLogEvents'], Resource: { 'Fn::GetAtt': [ids.apiLogs, 'Arn'] } },
      { Sid: 'ReadUsers', Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: table, Condition: leadingKeys('EMAIL#', 'USER#') },
      {
        Sid: 'WriteOwnKeyFields',
        Effect: 'Allow',
        Action: 'dynamodb:UpdateItem',
        Resource: table,
        // Never the e-mail address or the memberships of a user (security audit round 2, finding 7).
        Condition: { ...leadingKeys('USER#'), ...onlyAttributes('pk', 'sk', 'keyHash', 'keyLastFour', 'keyCreatedAt', 'sealedKey', 'keyScopes', 'keySenders', 'keyExpiresAt', 'keyTest') },
      },
      { Sid: 'KeyItems', Effect: 'Allow', Action: ['dynamodb:DeleteItem', 'dynamodb:PutItem'], Resource: table, Condition: leadingKeys('KEY#') },
      // When the key was last used, and nothing else of a key item.
      { Sid: 'ReadKeyLastUse', Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: table, Condition: { ...leadingKeys('KEY#'), ...onlyAttributes('pk', 'sk', 'lastUsedAt') } },
      {
        Sid: 'ReadOrganizationNames',
        Effect: 'Allow',
        Action: 'dynamodb:BatchGetItem',
        Resource: table,
        Condition: { ...leadingKeys('ORG#'), ...onlyAttributes('pk', 'sk', 'organizationId', 'name', 'members', 'pausedAt', 'pausedReason', 'limits', 'senders', 'tracking') },
      },
      { Sid: 'ReadReputationCounters', Effect: 'Allow', Action: 'dynamodb:BatchGetItem', Resource: table, Condition: leadingKeys('REP#') },
      { Sid: 'ReadTodaysUse', Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: table, Condition: leadingKeys('BUDGET#day#') },
      { Sid: 'ReadActivity', Effect: 'Allow', Action: 'dynamodb:Query', Resource: table, Condition: leadingKeys('ACT#', 'ACTR#') },
      { Sid: 'ScheduledMessages', Effect: 'Allow', Action: ['dynamodb:BatchGetItem', 'dynamodb:DeleteItem', 'dynamodb:Query', 'dynamodb:UpdateItem'], Resource: table, Condition: leadingKeys('SCHED#') },
      // A cancelled schedule's timer is deleted and its `email.cancelled` webhook queued: never a schedule made, nor a role passed.
      {
        Sid: 'DeleteSchedules',
        Effect: 'Allow',
        Action: 'scheduler:DeleteSchedule',
        Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':scheduler:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, `:schedule/${ids.group}/*`]] },
      },
      { Sid: 'ReadWebhooks', Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: table, Condition: leadingKeys('HOOK#') },
      { Sid: 'QueueWebhooks', Effect: 'Allow', Action: 'sqs:SendMessage', Resource: { 'Fn::GetAtt': [ids.webhookQueue, 'Arn'] } },
      { Sid: 'SuppressionLists', Effect: 'Allow', Action: ['dynamodb:DeleteItem', 'dynamodb:Query'], Resource: table, Condition: leadingKeys('SUPP#') },
      // Templates: listed and rendered for a preview, never written.
      { Sid: 'ReadTemplates', Effect: 'Allow', Action: ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query'], Resource: table, Condition: leadingKeys('TPL#') },
      {
        Sid: 'SuppressionCount',
        Effect: 'Allow',
        Action: 'dynamodb:UpdateItem',
        Resource: table,
        Condition: {
          ...leadingKeys('ORG#'),
          'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['pk', 'sk', 'suppressions'] },
          StringEqualsIfExists: { 'dynamodb:ReturnValues': ['NONE'] },
        },
      },
      {
        Sid: 'SealAndOpenOwnKeys',
        Effect: 'Allow',
        Action: ['kms:Decrypt', 'kms:Encrypt'],
        Resource: { 'Fn::GetAtt': [ids.key, 'Arn'] },
        Condition: { 'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['userId'] }, Null: { 'kms:EncryptionContext:userId': 'false' } },
      },
    ]);
    const env = template.toJSON().Resources[ids.apiFn].Properties.Environment.Variables as Json;
    expect(env).toMatchObject({ API_KEY_REVEAL: 'true', API_KEY_KMS_KEY_ID: { 'Fn::GetAtt': [ids.key, 'Arn'] } });
    // The scheduling parts' settings, as the cancel function has them: the timer's group and the webhook queue.
    expect(env).toMatchObject({
      SCHEDULE_GROUP_NAME: ids.group,
      SCHEDULE_QUEUE_URL: { Ref: ids.scheduleQueue },
      SCHEDULE_TARGET_ARN: { 'Fn::GetAtt': [ids.scheduleQueue, 'Arn'] },
      WEBHOOK_QUEUE_URL: { Ref: ids.webhookQueue },
    });
  });

  it('lets no other role open a key sealed for a user: the send role has no KMS access, the webhook role opens Organization-bound secrets only', () => {
    const statements = (roleId: string) => JSON.stringify(policyOf(template, roleId));
    expect(statements(ids.sendRole)).not.toContain('kms:');
    expect(statements(ids.eventsRole)).not.toContain('kms:');
    const webhookDecrypt = policyOf(template, ids.webhookRole).find((statement) => statement.Sid === 'OpenWebhookSecrets');
    expect(webhookDecrypt?.Condition).toEqual({ 'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['organizationId'] }, Null: { 'kms:EncryptionContext:organizationId': 'false' } });
  });

  it('lets the events function write the Activity rows, and read the states they come from', () => {
    const table = { 'Fn::GetAtt': [ids.table, 'Arn'] };
    expect(policyOf(template, ids.eventsRole)).toEqual(
      expect.arrayContaining([
        { Sid: 'ActivityReadsStates', Effect: 'Allow', Action: 'dynamodb:BatchGetItem', Resource: table, Condition: leadingKeys('MSG#') },
        { Sid: 'ActivityRows', Effect: 'Allow', Action: 'dynamodb:UpdateItem', Resource: table, Condition: leadingKeys('ACT#', 'ACTR#') },
      ]),
    );
  });

  it('with reveal turned off (context apiKeyReveal false), gives the settings API no KMS access and tells both functions', () => {
    const { stack: off } = buildStack({ tracing: false, apiKeyReveal: false });
    const offTemplate = Template.fromStack(off);
    const role = logicalId(off, off.node.findChild('SettingsApiFunctionRole') as never);
    expect(JSON.stringify(policyOf(offTemplate, role))).not.toContain('kms:');
    const resources = offTemplate.toJSON().Resources as Json;
    for (const id of ['SettingsApiFunction', 'SettingsPageFunction']) {
      const variables = resources[logicalId(off, off.node.findChild(id) as never)].Properties.Environment.Variables as Json;
      expect([id, variables.API_KEY_REVEAL, variables.API_KEY_KMS_KEY_ID]).toEqual([id, 'false', undefined]);
    }
  });

  it('lets the page function write its own logs and nothing else', () => {
    expect(policyOf(template, ids.pageRole)).toEqual([
      { Sid: 'WriteOwnLogs', Effect: 'Allow', Action: ['logs:CreateLogStream', 'logs:PutLogEvents'], Resource: { 'Fn::GetAtt': [ids.pageLogs, 'Arn'] } },
    ]);
    const page = template.toJSON().Resources[ids.pageFn].Properties.Environment.Variables as Json;
    expect(page.TABLE_NAME).toBeUndefined();
  });

  it('hands the page function an environment its own configuration loader accepts', () => {
    const variables = template.toJSON().Resources[ids.pageFn].Properties.Environment.Variables as Json;
    // Tokens stand in for the deploy-time values; the loader checks shapes, so give it URL-shaped ones.
    const env = Object.fromEntries(
      Object.entries(variables).map(([k, v]) => [k, typeof v === 'string' ? v : k === 'OIDC_CONNECT_ORIGINS' ? 'https://a.example https://b.example' : k.endsWith('_URL') || k === 'OIDC_ISSUER' ? 'https://issuer.example/x' : `resolved-${k}`]),
    );
    expect(loadPageConfig(env)).toMatchObject({ issuer: 'https://issuer.example/x', clientId: 'resolved-OIDC_CLIENT_ID' });
  });

  it('outputs the settings URL, the issuer and the user pool id', () => {
    const outputs = template.toJSON().Outputs as Json;
    expect(outputs.SettingsUrl.Value['Fn::Join'][1].at(-1)).toBe('/settings');
    expect(outputs.OidcIssuer.Value).toEqual({ 'Fn::GetAtt': [ids.pool, 'ProviderURL'] });
    expect(outputs.UserPoolId.Value).toEqual({ Ref: ids.pool });
  });
});

describe('settings page in the stack (an existing OpenID issuer)', () => {
  const context = { oidcIssuer: 'https://login.example.com/tenant-1/', oidcClientId: 'settings-page', oidcLogoutUrl: 'https://login.example.com/logout', oidcConnectOrigins: 'https://token.example.com' };

  it('makes no user pool, and points the authorizer and the page at the issuer and client given', () => {
    const { stack } = buildStack(context);
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::Cognito::UserPool', 0);
    template.resourceCountIs('AWS::Cognito::UserPoolClient', 0);
    template.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', { JwtConfiguration: { Audience: ['settings-page'], Issuer: 'https://login.example.com/tenant-1' } });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          OIDC_ISSUER: 'https://login.example.com/tenant-1',
          OIDC_CLIENT_ID: 'settings-page',
          OIDC_LOGOUT_URL: 'https://login.example.com/logout',
          OIDC_CONNECT_ORIGINS: 'https://login.example.com/tenant-1 https://token.example.com',
        }),
      },
    });
    const outputs = template.toJSON().Outputs as Json;
    expect(outputs.OidcIssuer.Value).toBe('https://login.example.com/tenant-1');
    expect(outputs.UserPoolId).toBeUndefined();
  });

  it.each([
    [{ oidcIssuer: 'https://login.example.com' }, /"oidcIssuer" and "oidcClientId" must be set together/],
    [{ oidcClientId: 'x' }, /"oidcIssuer" and "oidcClientId" must be set together/],
    [{ oidcIssuer: 'http://login.example.com', oidcClientId: 'x' }, /oidcIssuer/],
    [{ oidcLogoutUrl: 'https://login.example.com/logout' }, /go with "oidcIssuer"/],
    [{ cognitoDomainPrefix: 'Has Spaces' }, /cognitoDomainPrefix/],
    [{ ...context, cognitoDomainPrefix: 'my-team' }, /"cognitoDomainPrefix" is for the stack's own user pool/],
  ])('refuses sign-in settings that cannot work: %j', (bad, message) => {
    expect(() => buildStack(bad)).toThrow(message);
  });
});
