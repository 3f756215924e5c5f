/**
 * The single table's key schema, shared by the DynamoDB adapter, the local stack and the CDK
 * stack so the three cannot disagree.
 *
 * | item                | pk                   | sk      | attributes                                      |
 * |---------------------|----------------------|---------|-------------------------------------------------|
 * | API key             | KEY#<sha256 of key>  | KEY     | userId, createdAt                               |
 * | user                | USER#<userId>        | USER    | email, keyHash?, keyLastFour?, keyCreatedAt?    |
 * | user e-mail (unique)| EMAIL#<lower email>  | EMAIL   | userId                                          |
 * | Organization        | ORG#<orgId>          | ORG     | name, members (string set), senders (string set)|
 * | send-rate budget    | BUDGET#ses-send-rate | BUDGET  | tat (epoch ms), expiresAt                       |
 * | message status      | MSG#<SES message id> | MSG     | organizationId, expiresAt, r:<address> (state)  |
 * | suppressed address  | SUPP#<orgId>         | address | reason, at, messageId                           |
 * | webhook             | HOOK#<orgId>         | HOOK    | url, secret (sealed), createdAt                 |
 * | scheduled message   | SCHED#<scheduleId>   | SCHED   | organizationId, userId, state, sendAt, dueAt, body? (see schedules/) |
 * | … its larger body   | SCHED#<scheduleId>   | PART#nnnn | data (binary), expiresAt                      |
 */
export const TABLE_SCHEMA = {
  partitionKey: 'pk',
  sortKey: 'sk',
  /** Epoch seconds; DynamoDB's TTL deletes records after it (idempotency records, message statuses). */
  ttlAttribute: 'expiresAt',
} as const;

/** Partition prefixes the send function may touch, for its IAM `dynamodb:LeadingKeys` conditions. */
export const SEND_FUNCTION_PARTITIONS = { apiKey: 'KEY#', organization: 'ORG#', idempotency: 'IDEM#', sendBudget: 'BUDGET#' } as const;
/** Every partition prefix, for the IAM conditions of each function (the settings API's too). */
export const PARTITIONS = { ...SEND_FUNCTION_PARTITIONS, user: 'USER#', email: 'EMAIL#' } as const;
const P = PARTITIONS;

/** Partitions of the delivery lifecycle (events, status, suppression, webhooks), for the IAM of the functions that touch them. */
export const DELIVERY_PARTITIONS = { message: 'MSG#', suppression: 'SUPP#', webhook: 'HOOK#' } as const;
/** Scheduled messages (CONTRACT section 13): written by the send function, read and moved on by the scheduled-send, cancel and status functions. */
export const SCHEDULE_PARTITION = 'SCHED#';
const D = DELIVERY_PARTITIONS;

/** The Organization item's count of suppressed addresses (an upper bound: see dynamodb-suppression-store.ts). */
export const SUPPRESSION_COUNT_ATTRIBUTE = 'suppressions';

export const itemKey = {
  apiKey: (keyHash: string) => ({ pk: `${P.apiKey}${keyHash}`, sk: 'KEY' }),
  user: (userId: string) => ({ pk: `${P.user}${userId}`, sk: 'USER' }),
  email: (email: string) => ({ pk: `${P.email}${email.toLowerCase()}`, sk: 'EMAIL' }),
  organization: (organizationId: string) => ({ pk: `${P.organization}${organizationId.toLowerCase()}`, sk: 'ORG' }),
  sendBudget: () => ({ pk: `${P.sendBudget}ses-send-rate`, sk: 'BUDGET' }),
  /** An idempotency record's partition: the user and a hash of the client's key. */
  idempotencyScope: (userId: string, keyHash: string) => `${P.idempotency}${userId}#${keyHash}`,
  /** One message's recorded delivery states, by its SES message id. */
  message: (messageId: string) => ({ pk: `${D.message}${messageId}`, sk: 'MSG' }),
  /** One suppressed address of an Organization (lower-case); the partition lists them all. */
  suppression: (organizationId: string, address: string) => ({ pk: suppressionPartition(organizationId), sk: address.toLowerCase() }),
  webhook: (organizationId: string) => ({ pk: `${D.webhook}${organizationId.toLowerCase()}`, sk: 'HOOK' }),
  /** A scheduled message's head item; its body's parts, when it has any, share the partition. */
  schedule: (scheduleId: string) => ({ pk: schedulePartition(scheduleId), sk: 'SCHED' }),
  schedulePart: (scheduleId: string, part: number) => ({ pk: schedulePartition(scheduleId), sk: `PART#${String(part).padStart(4, '0')}` }),
};

export function schedulePartition(scheduleId: string): string {
  return `${SCHEDULE_PARTITION}${scheduleId.toLowerCase()}`;
}

export function suppressionPartition(organizationId: string): string {
  return `${D.suppression}${organizationId.toLowerCase()}`;
}
