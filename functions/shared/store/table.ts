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
 */
export const TABLE_SCHEMA = {
  partitionKey: 'pk',
  sortKey: 'sk',
  /** Epoch seconds; DynamoDB's TTL deletes records after it (idempotency records). */
  ttlAttribute: 'expiresAt',
} as const;

/** Partition prefixes the send function may touch, for its IAM `dynamodb:LeadingKeys` conditions. */
export const SEND_FUNCTION_PARTITIONS = { apiKey: 'KEY#', organization: 'ORG#', idempotency: 'IDEM#', sendBudget: 'BUDGET#' } as const;
/** Every partition prefix, for the IAM conditions of each function (the settings API's too). */
export const PARTITIONS = { ...SEND_FUNCTION_PARTITIONS, user: 'USER#', email: 'EMAIL#' } as const;
const P = PARTITIONS;

export const itemKey = {
  apiKey: (keyHash: string) => ({ pk: `${P.apiKey}${keyHash}`, sk: 'KEY' }),
  user: (userId: string) => ({ pk: `${P.user}${userId}`, sk: 'USER' }),
  email: (email: string) => ({ pk: `${P.email}${email.toLowerCase()}`, sk: 'EMAIL' }),
  organization: (organizationId: string) => ({ pk: `${P.organization}${organizationId.toLowerCase()}`, sk: 'ORG' }),
  sendBudget: () => ({ pk: `${P.sendBudget}ses-send-rate`, sk: 'BUDGET' }),
  /** An idempotency record's partition: the user and a hash of the client's key. */
  idempotencyScope: (userId: string, keyHash: string) => `${P.idempotency}${userId}#${keyHash}`,
};
