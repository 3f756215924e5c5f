/**
 * The single table's key schema, shared by the DynamoDB adapter, the local stack and the CDK
 * stack so the three cannot disagree.
 *
 * | item                | pk                   | sk      | attributes                                      |
 * |---------------------|----------------------|---------|-------------------------------------------------|
 * | API key             | KEY#<sha256 of key>  | KEY     | userId, createdAt, lastUsedAt? (the hour)       |
 * | user                | USER#<userId>        | USER    | email (or serviceName and serviceOrganization), keyHash?, keyLastFour?, keyCreatedAt?, sealedKey?, keyScopes?, keySenders?, keyExpiresAt?, keyTest? |
 * | user e-mail (unique)| EMAIL#<lower email>  | EMAIL   | userId                                          |
 * | Organization        | ORG#<orgId>          | ORG     | name, members (string set), senders (string set), limits? |
 * | send-rate budget    | BUDGET#ses-send-rate | BUDGET  | tat (epoch ms), orgs (fair share), v, expiresAt |
 * | … split (> 100/s)   | BUDGET#ses-send-rate#<k> | BUDGET | the same, per shard (domain/budget-shards.ts) |
 * | daily usage         | BUDGET#day#<orgId>   | <day>   | used (recipients that UTC day), expiresAt       |
 * | message status      | MSG#<SES message id> | MSG     | organizationId, expiresAt, r:<address> (state), opens, machineOpens, firstOpenedAt, clicks, soleRecipient |
 * | … open/click counted| MSG#<SES message id> | E#<event id> | expiresAt (dynamodb-engagement-store.ts)    |
 * | suppressed address  | SUPP#<orgId>         | address | reason, at, messageId                           |
 * | webhook             | HOOK#<orgId>         | HOOK    | url, secret (sealed), createdAt                 |
 * | reputation counters | REP#<orgId>          | REP     | s:<day>, b:<day>, c:<day> (numbers), expiresAt  |
 *
 * A paused Organization carries `pausedAt` and `pausedReason` on its ORG item (see
 * dynamodb-reputation-store.ts), so the send path learns it from the read it already makes.
 * | scheduled message   | SCHED#<scheduleId>   | SCHED   | organizationId, userId, keyHash, state, sendAt, dueAt, body? (see schedules/) |
 * | … its larger body   | SCHED#<scheduleId>   | PART#nnnn | data (binary), expiresAt                      |
 * | pending schedules   | SCHED#org#<orgId>    | PENDING | pending (count; schedules/organization-schedules.ts) |
 * | … one waiting       | SCHED#org#<orgId>    | S#<scheduleId> | userId, keyHash, sendAt, recipients, subject, expiresAt |
 * | activity            | ACT#<orgId>          | <sent at>#<msgId> | messageId, sentAt, from, recipients, subject, status, v, expiresAt |
 * | template, versions  | TPL#<orgId>          | T#<name>, V#<name>#<n>, COUNT | see templates/template-store.ts     |
 * | activity, by address| ACTR#<orgId>#<address> | <sent at>#<msgId> | the same row, once per recipient          |
 */
import { mailboxOf } from '../domain/email-address';
import { asciiLowerCase } from '../domain/unicode';

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
export const DELIVERY_PARTITIONS = { message: 'MSG#', suppression: 'SUPP#', webhook: 'HOOK#', reputation: 'REP#' } as const;
/** Scheduled messages (CONTRACT section 13): written by the send function, read and moved on by the scheduled-send, cancel and status functions. */
export const SCHEDULE_PARTITION = 'SCHED#';
/** An Organization's templates (CONTRACT section 14, templates/template-store.ts): written by the templates function, read by it and the send path. */
export const TEMPLATE_PARTITION = 'TPL#';
/** Partitions of the settings page's Activity list (store/dynamodb-activity-store.ts): written by the events function, read by the settings API. */
export const ACTIVITY_PARTITIONS = { organization: 'ACT#', recipient: 'ACTR#' } as const;
const D = DELIVERY_PARTITIONS;

/**
 * What an API-key function reads of a user item: the hash of the key it holds and what that key
 * may do (domain/key-policy.ts), in the one read that checks the holder. Its IAM allows these
 * attributes of `USER#` items and no others (`dynamodb:Attributes`).
 */
export const USER_KEY_ATTRIBUTES = ['pk', 'sk', 'keyHash', 'keyScopes', 'keySenders', 'keyExpiresAt'] as const;
export const USER_KEY_PROJECTION = USER_KEY_ATTRIBUTES.join(', ');
/** The user item's key fields: all a key change writes there (dynamodb-key-store.ts), and all the settings API may. */
export const USER_KEY_FIELDS = ['keyHash', 'keyLastFour', 'keyCreatedAt', 'sealedKey', 'keyScopes', 'keySenders', 'keyExpiresAt', 'keyTest'] as const;
/**
 * The key item's record of its last use: the hour (ISO, minutes zero), written at most once an
 * hour per key by the API-key functions, the only attribute of a key item they may write.
 */
export const LAST_USED_ATTRIBUTE = 'lastUsedAt';
/**
 * What the settings API reads of an Organization: its name, the members that say the user may see
 * it, its pause, its limits, its sender identities (a key may be limited to some of them) and its
 * default tracking.
 */
export const ORGANIZATION_NAME_ATTRIBUTES = ['pk', 'sk', 'organizationId', 'name', 'members', 'pausedAt', 'pausedReason', 'limits', 'senders', 'tracking'] as const;

/** The Organization item's count of suppressed addresses (an upper bound: see dynamodb-suppression-store.ts). */
export const SUPPRESSION_COUNT_ATTRIBUTE = 'suppressions';
/** The Organization item's operator-set limits (domain/org-limits.ts). */
export const LIMITS_ATTRIBUTE = 'limits';
/** The Organization item's default open and click tracking (mail/tracking.ts `readTracking`); absent: off. */
export const TRACKING_ATTRIBUTE = 'tracking';
/** Counted up by each change of `tracking` (`org tracking`), which is written only at the version it read. */
export const TRACKING_VERSION_ATTRIBUTE = 'trackingVersion';

/** The Organization item's pause (CONTRACT section 11 item 3): when, and why in words; absent when it may send. */
export const PAUSE_ATTRIBUTES = { at: 'pausedAt', reason: 'pausedReason' } as const;

export const itemKey = {
  apiKey: (keyHash: string) => ({ pk: `${P.apiKey}${keyHash}`, sk: 'KEY' }),
  user: (userId: string) => ({ pk: `${P.user}${userId}`, sk: 'USER' }),
  email: (email: string) => ({ pk: `${P.email}${asciiLowerCase(email)}`, sk: 'EMAIL' }),
  organization: (organizationId: string) => ({ pk: `${P.organization}${organizationId.toLowerCase()}`, sk: 'ORG' }),
  /** The one budget item, or shard `k` of a split budget (domain/budget-shards.ts). */
  sendBudget: (shard?: number) => ({ pk: `${P.sendBudget}ses-send-rate${shard === undefined ? '' : `#${shard}`}`, sk: 'BUDGET' }),
  /** An Organization's use of its daily quota on one UTC day (in the budget's partitions: same IAM). */
  dailyUsage: (organizationId: string, day: string) => ({ pk: `${P.sendBudget}day#${organizationId.toLowerCase()}`, sk: day }),
  /** An idempotency record's partition: the user and a hash of the client's key. */
  idempotencyScope: (userId: string, keyHash: string) => `${P.idempotency}${userId}#${keyHash}`,
  /** One message's recorded delivery states, by its SES message id. */
  message: (messageId: string) => ({ pk: `${D.message}${messageId}`, sk: 'MSG' }),
  /** One suppressed mailbox of an Organization (`mailboxOf`: any spelling of it finds it); the partition lists them all. */
  suppression: (organizationId: string, address: string) => ({ pk: suppressionPartition(organizationId), sk: mailboxOf(address) }),
  webhook: (organizationId: string) => ({ pk: `${D.webhook}${organizationId.toLowerCase()}`, sk: 'HOOK' }),
  /** An Organization's rolling reputation counters, one attribute per kind and UTC day. */
  reputation: (organizationId: string) => ({ pk: `${D.reputation}${organizationId.toLowerCase()}`, sk: 'REP' }),
  /** A scheduled message's head item; its body's parts, when it has any, share the partition. */
  schedule: (scheduleId: string) => ({ pk: schedulePartition(scheduleId), sk: 'SCHED' }),
  schedulePart: (scheduleId: string, part: number) => ({ pk: schedulePartition(scheduleId), sk: `PART#${String(part).padStart(4, '0')}` }),
  /** One message in its Organization's Activity list (sort key: send time, then message id). */
  activity: (organizationId: string, sortKey: string) => ({ pk: `${ACTIVITY_PARTITIONS.organization}${organizationId.toLowerCase()}`, sk: sortKey }),
  /** The same message in the list of one of its recipients (lower-case). */
  recipientActivity: (organizationId: string, address: string, sortKey: string) => ({
    pk: `${ACTIVITY_PARTITIONS.recipient}${organizationId.toLowerCase()}#${address.toLowerCase()}`,
    sk: sortKey,
  }),
};

export function schedulePartition(scheduleId: string): string {
  return `${SCHEDULE_PARTITION}${scheduleId.toLowerCase()}`;
}

export function suppressionPartition(organizationId: string): string {
  return `${D.suppression}${organizationId.toLowerCase()}`;
}
