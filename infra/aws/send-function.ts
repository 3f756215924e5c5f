/**
 * The send function: its statements (exactly what sending needs) and its settings, on the
 * service's function defaults (`service-function.ts`).
 */
import { Duration } from 'aws-cdk-lib';
import type { Stack } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Role } from 'aws-cdk-lib/aws-iam';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { SEND_PATH } from '../../functions/send/route';
import { DELIVERY_PARTITIONS, PAUSE_ATTRIBUTES, SEND_FUNCTION_PARTITIONS, TABLE_SCHEMA } from '../../functions/shared/store/table';
import type { ConfigurationSets } from './configuration-sets';
import { configurationSetArns } from './configuration-sets';
import { SEND_ENTRY, SEND_SPLIT_BUNDLING } from './send-bundle';
import { addServiceFunction, inPartitions, readKeyHolders, recordKeyUse } from './service-function';
import type { StackSettings } from './settings';
import { readTemplates } from './templates';

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

/**
 * What sending a message takes, whoever sends it: the send function, and the scheduled-send
 * function when a scheduled message's time comes (infra/aws/scheduled-send.ts), which sends through
 * the same pipeline and so must be allowed the same, and no more.
 */
export function sendingStatements(stack: Stack, table: Table, configurationSets: ConfigurationSets, settings: StackSettings): PolicyStatement[] {
  // Items in these partitions only: the function can never write a key, user or Organization item
  // (but an Organization's pause), nor read a user's.
  return [
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
      sid: 'SendRateBudget',
      // The account's send-rate budget, shared by every instance: one item, read and moved on
      // with conditional writes; and the daily quota counters (BUDGET#day#<org>) of the
      // Organizations that have one.
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
      // configuration set and the tenant; all must be listed: the base set and the three tracked
      // ones, each by name (tracking is chosen by set). Which identity an Organization may
      // use is the service's decision (its sender list), so every identity of this account and
      // region is allowed here, and SES itself refuses identities that are not verified. Tenants
      // are the Organizations' own (`org-<id>`, made by the admin CLI), by that name prefix.
      actions: ['ses:SendEmail'],
      resources: [
        stack.formatArn({ service: 'ses', resource: 'identity', resourceName: '*' }),
        ...configurationSetArns(stack, configurationSets),
        ...(settings.sesTenants.enabled ? [tenantArnPattern(stack)] : []),
      ],
    }),
    ...(settings.sesTenants.enabled
      ? [
          new PolicyStatement({
            sid: 'PauseOrganization',
            // A send SES refuses for a paused tenant pauses the Organization: the pause attributes
            // of its item and nothing else (not members, senders or name), answering nothing back.
            actions: ['dynamodb:UpdateItem'],
            resources: [table.tableArn],
            conditions: {
              ...inPartitions(SEND_FUNCTION_PARTITIONS.organization),
              'ForAllValues:StringEquals': { 'dynamodb:Attributes': [TABLE_SCHEMA.partitionKey, TABLE_SCHEMA.sortKey, PAUSE_ATTRIBUTES.at, PAUSE_ATTRIBUTES.reason] },
              StringEqualsIfExists: { 'dynamodb:ReturnValues': ['NONE'] },
            },
          }),
        ]
      : []),
  ];
}

export function addSendFunction(stack: Stack, table: Table, configurationSets: ConfigurationSets, settings: StackSettings): SendFunction {
  const [readAccessRecords, ...spendAndSend] = sendingStatements(stack, table, configurationSets, settings);
  const statements: PolicyStatement[] = [
    readAccessRecords!,
    // Only the send function authenticates API keys: a key counts only while its user holds it.
    readKeyHolders(table),
    recordKeyUse(table),
    new PolicyStatement({
      sid: 'IdempotencyRecords',
      // Idempotency records and their per-message checkpoints: read, write and query.
      actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:Query'],
      resources: [table.tableArn],
      conditions: inPartitions(SEND_FUNCTION_PARTITIONS.idempotency),
    }),
    // A message may be written from a stored template (CONTRACT section 14): its version is read, never written.
    readTemplates(table),
    ...spendAndSend,
  ];

  return addServiceFunction(stack, 'SendFunction', settings, {
    description: `POST ${SEND_PATH}: validate, authorise and send through Amazon SES`,
    roleDescription: 'Send function: read access records, pace and send through SES, schedule, queue webhooks and test-mode events, write its own logs',
    entry: SEND_ENTRY,
    bundling: SEND_SPLIT_BUNDLING,
    statements,
    serviceName: SERVICE_NAME,
    // CPU scales with memory, and this function's cost is CPU more than memory: TLS handshakes
    // to DynamoDB and SES on a cold start, parsing and validating up to 5 MiB of JSON, building
    // up to 100 MIME messages, and SEND_CONCURRENCY SES calls in flight. 1024 MB (about 0.6 vCPU)
    // keeps that well inside the API deadline; the heap needs far less.
    memorySize: settings.functionMemoryMb,
    timeout: FUNCTION_TIMEOUT,
    // Every setting the function reads (functions/shared/runtime/config.ts).
    environment: {
      TABLE_NAME: table.tableName,
      // The base set; the send path names a tracked one after it (functions/shared/mail/tracking.ts).
      SES_CONFIGURATION_SET: configurationSets.base.configurationSetName,
      ...settings.serviceEnvironment,
    },
  });
}


/** Every Organization's SES tenant in this account and region: `org-<id>` (functions/shared/mail/tenants.ts), then SES's tenant id. */
export function tenantArnPattern(stack: Stack): string {
  return stack.formatArn({ service: 'ses', resource: 'tenant', resourceName: 'org-*' });
}
