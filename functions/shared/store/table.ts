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

export const itemKey = {
  apiKey: (keyHash: string) => ({ pk: `KEY#${keyHash}`, sk: 'KEY' }),
  user: (userId: string) => ({ pk: `USER#${userId}`, sk: 'USER' }),
  email: (email: string) => ({ pk: `EMAIL#${email.toLowerCase()}`, sk: 'EMAIL' }),
  organization: (organizationId: string) => ({ pk: `ORG#${organizationId.toLowerCase()}`, sk: 'ORG' }),
  sendBudget: () => ({ pk: 'BUDGET#ses-send-rate', sk: 'BUDGET' }),
};

/** Partition prefixes the send function may write, for its IAM `dynamodb:LeadingKeys` conditions. */
export const SEND_FUNCTION_PARTITIONS = { idempotency: 'IDEM#', sendBudget: 'BUDGET#' } as const;
