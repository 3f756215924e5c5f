/**
 * The AWS stack: HTTP API -> send function -> DynamoDB table + Amazon SES. It reads as a list:
 * the table here, the configuration sets (`configuration-sets.ts`), the send function (`send-function.ts`), the delivery
 * lifecycle (`delivery-lifecycle.ts`), scheduled send (`scheduled-send.ts`), the API
 * (`http-api.ts`), the operator's policy (`operator.ts`), alarms (`alarms.ts`), outputs, and the cdk-nag acknowledgements (`nag.ts`).
 *
 * Environment-agnostic (no account or region, no lookups) so `cdk synth` runs anywhere without
 * credentials; account and region come from the credentials at deploy time.
 */
import { Aws, CfnOutput, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { StackProps } from 'aws-cdk-lib';
import type { HttpApi, HttpStage } from 'aws-cdk-lib/aws-apigatewayv2';
import { AttributeType, BillingMode, Table } from 'aws-cdk-lib/aws-dynamodb';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { ConfigurationSet } from 'aws-cdk-lib/aws-ses';
import { API_ROUTES } from '../../functions/shared/http/api-routes';
import type { DeliveryLifecycle } from './delivery-lifecycle';
import { EVENTS_SERVICE_NAME, addDeliveryLifecycle } from './delivery-lifecycle';
import type { Construct } from 'constructs';
import { SEND_PATH } from '../../functions/send/route';
import { TABLE_SCHEMA } from '../../functions/shared/store/table';
import { addAlarms } from './alarms';
import { addConfigurationSets } from './configuration-sets';
import type { TrackedConfigurationSet } from './configuration-sets';
import { addSendApi } from './http-api';
import { addTemplates } from './templates';
import { acknowledgeNagFindings } from './nag';
import { addOperatorPolicy } from './operator';
import { addReputation } from './reputation';
import type { ScheduledSend } from './scheduled-send';
import { SCHEDULED_SERVICE_NAME, addScheduledSend } from './scheduled-send';
import { SERVICE_NAME, addSendFunction } from './send-function';
import { allowTestModeEvents } from './test-mode';
import { readSettings } from './settings';
import { addSettings } from './settings-functions';
import { addSignIn, settingsPageUrls } from './sign-in';

export { SEND_PATH } from '../../functions/send/route';
export { SERVICE_NAME } from './send-function';

export class EmailSendApiStack extends Stack {
  readonly table: Table;
  readonly sendFunction: NodejsFunction;
  readonly api: HttpApi;
  readonly stage: HttpStage;
  /** Untracked mail's configuration set; tracked mail goes through `trackedConfigurationSets`. */
  readonly configurationSet: ConfigurationSet;
  readonly trackedConfigurationSets: readonly TrackedConfigurationSet[];
  readonly settingsApiFunction: NodejsFunction;
  readonly settingsPageFunction: NodejsFunction;
  /** Behind /v1.2/templates… (CONTRACT section 14). */
  readonly templatesFunction: NodejsFunction;
  readonly lifecycle: DeliveryLifecycle;
  readonly scheduledSend: ScheduledSend;

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
    const configurationSets = addConfigurationSets(this, settings);
    this.configurationSet = configurationSets.base;
    this.trackedConfigurationSets = configurationSets.tracked;

    const send = addSendFunction(this, this.table, configurationSets, settings);
    this.sendFunction = send.fn;
    this.lifecycle = addDeliveryLifecycle(this, this.table, configurationSets, settings);
    this.scheduledSend = addScheduledSend(this, this.table, configurationSets, settings, send, this.lifecycle.webhookQueue);
    allowTestModeEvents([send, this.scheduledSend.fire], this.lifecycle.eventsQueue);
    const { api, stage, sendRoutes, statusRoutes, cancelRoutes, customDomain } = addSendApi(this, send.fn, settings, this.lifecycle.status.fn, this.scheduledSend.cancel.fn);
    this.api = api;
    this.stage = stage;
    const templates = addTemplates(this, this.table, api, settings);
    this.templatesFunction = templates.function.fn;
    const operator = addOperatorPolicy(this, this.scheduledSend, this.lifecycle.webhookQueue);
    // Every function that may pause an Organization: the events function for its rates, the send and
    // scheduled-send functions when SES refuses a send for the Organization's paused tenant.
    const reputation = addReputation(this, configurationSets, settings, [SERVICE_NAME, EVENTS_SERVICE_NAME, SCHEDULED_SERVICE_NAME]);
    addAlarms(this, api, send.fn, settings, [...this.lifecycle.alarms, ...this.scheduledSend.alarms, reputation.alarm]);
    const signIn = addSignIn(this, api, settings);
    const settingsParts = addSettings(this, this.table, api, settings, signIn, this.lifecycle.webhookKey, this.scheduledSend.cancelling);
    this.settingsApiFunction = settingsParts.api.fn;
    this.settingsPageFunction = settingsParts.page.fn;

    new CfnOutput(this, 'SendUrl', { description: 'POST endpoint of the send API', value: `${stage.url}${SEND_PATH.slice(1)}` });
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
    new CfnOutput(this, 'SettingsUrl', {
      description: 'The self-service settings page: users sign in and get their own API key and Organization ids',
      value: settingsPageUrls(api, settings).at(-1)!,
    });
    new CfnOutput(this, 'OidcIssuer', { description: 'The OpenID provider the settings page signs in with', value: signIn.issuer });
    if (signIn.userPool) {
      new CfnOutput(this, 'UserPoolId', {
        description: 'Cognito user pool of the settings page; pass it to the admin CLI as --user-pool-id so "user create" invites the user',
        value: signIn.userPool.userPoolId,
      });
    }
    new CfnOutput(this, 'StatusUrl', { description: 'POST endpoint of the status API', value: `${stage.url}${API_ROUTES.status.path.slice(1)}` });
    new CfnOutput(this, 'TemplatesUrl', { description: 'The templates endpoints (GET lists; /{Name} saves, reads and deletes one)', value: `${stage.url}${API_ROUTES.templates.path.slice(1)}` });
    new CfnOutput(this, 'CancelUrl', { description: 'POST endpoint that cancels scheduled messages', value: `${stage.url}${API_ROUTES.cancel.path.slice(1)}` });
    new CfnOutput(this, 'ScheduleGroupName', { description: 'EventBridge Scheduler group holding the scheduled messages\' one-time schedules', value: this.scheduledSend.group.scheduleGroupName });
    new CfnOutput(this, 'WebhookKeyArn', {
      description: 'KMS key sealing webhook secrets (and, bound to their user, API keys); pass it to "admin webhook set" as --kms-key',
      value: this.lifecycle.webhookKey.keyArn,
    });
    new CfnOutput(this, 'TableName', { description: 'DynamoDB table; pass it to the admin CLI as --table', value: this.table.tableName });
    new CfnOutput(this, 'Region', { description: 'Region; pass it to the admin CLI as --region', value: Aws.REGION });
    new CfnOutput(this, 'ConfigurationSetName', {
      description: 'SES configuration set of untracked messages; tracked ones go through <this>-track-opens, -track-clicks and -track-opens-clicks',
      value: this.configurationSet.configurationSetName,
    });

    const { events, webhooks, status } = this.lifecycle;
    const { fire, cancel } = this.scheduledSend;
    acknowledgeNagFindings({
      api,
      apiKeyRoutes: [...sendRoutes, ...statusRoutes, ...cancelRoutes, ...templates.routes],
      sendRole: send.role,
      fireRole: fire.role,
      scheduleRoles: [send.role, fire.role, cancel.role, settingsParts.api.role, operator],
      scheduleGroupName: this.scheduledSend.group.scheduleGroupName,
      tracing: settings.tracing,
      pageRoutes: settingsParts.pageRoutes,
      userPool: signIn.userPool,
      tracedRoles: [settingsParts.api.role, settingsParts.page.role, events.role, webhooks.role, status.role, cancel.role, templates.function.role],
      tenantAdministration: reputation.tenantAdministration,
    });
  }
}
