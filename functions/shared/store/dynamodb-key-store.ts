/**
 * Users and their one API key: the rules for generating, rotating, showing and revoking a key,
 * in one place for the admin command line and the self-service settings API alike.
 *
 * dynalite (the local DynamoDB) has no transactions, so a key change is a sequence of single-item
 * writes with one conditional write on the user item as its commit point (that is what keeps "at
 * most one key per user" true under races), ordered so that an interruption fails closed: a key
 * that should stop working never keeps working; at worst the user is left with no working key and
 * runs rotate again.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { BatchGetCommand, DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { generateApiKey, hashApiKey, keyLastFour, maskApiKey } from '../domain/api-keys';
import type { OrganizationLimits } from '../domain/org-limits';
import { readLimits } from '../domain/org-limits';
import { conditionally } from './conditions';
import type { IssuedKey, KeySummary, User } from './records';
import { RecordConflictError, RecordNotFoundError } from './records';
import { LIMITS_ATTRIBUTE, itemKey } from './table';

export interface StoredUser extends User {
  readonly keyHash?: string;
  readonly keyLastFour?: string;
  readonly keyCreatedAt?: string;
  /** The key sealed for its owner (functions/me/key-reveal.ts); absent when it was made with reveal off or before it. */
  readonly sealedKey?: string;
  /** Organizations the user is a member of (kept beside the Organization's own member set). */
  readonly organizations: readonly string[];
}

type Item = Record<string, unknown>;

/** Seals a new key for its user before it is stored (the settings API, with reveal on); see functions/me/key-reveal.ts. */
export type SealKey = (key: string, userId: string) => Promise<string>;

export class DynamoDbKeyStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** The user, or a not-found error; `userId` must already be a canonical lower-case UUID. */
  async getUser(userId: string): Promise<StoredUser> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.tableName, Key: itemKey.user(userId), ConsistentRead: true }));
    if (!Item) throw new RecordNotFoundError(`no user with id ${userId}`);
    return toUser(userId, Item);
  }

  /** The user with that e-mail address (compared case-insensitively), if there is one. */
  async findUserByEmail(email: string): Promise<StoredUser | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.tableName, Key: itemKey.email(email), ConsistentRead: true }));
    if (typeof Item?.userId !== 'string') return undefined;
    return this.getUser(Item.userId).catch((error: unknown) => {
      if (error instanceof RecordNotFoundError) return undefined;
      throw error;
    });
  }

  /** The user's Organizations with their names (and limits), sorted by name. */
  async organizationsOf(user: StoredUser): Promise<{ readonly id: string; readonly name: string; readonly limits: OrganizationLimits }[]> {
    if (user.organizations.length === 0) return [];
    const { Responses } = await this.client.send(
      new BatchGetCommand({
        RequestItems: { [this.tableName]: { Keys: user.organizations.slice(0, 100).map((id) => itemKey.organization(id)), ConsistentRead: true } },
      }),
    );
    return (Responses?.[this.tableName] ?? [])
      .filter((item) => item.members instanceof Set && item.members.has(user.id))
      .map((item) => ({ id: String(item.organizationId), name: String(item.name), limits: readLimits(item[LIMITS_ATTRIBUTE]) }))
      .sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
  }

  /** Creates the user's key; refuses when the user already has one (that is `rotate`). */
  async generate(userId: string, seal?: SealKey): Promise<IssuedKey> {
    const user = await this.getUser(userId);
    if (user.keyHash) throw new RecordConflictError(`user ${user.id} already has a key; use "key rotate" to replace it`);
    return this.writeKey(user.id, undefined, seal);
  }

  /** Replaces the user's key atomically: the old one stops working as the new one starts. */
  async rotate(userId: string, seal?: SealKey): Promise<IssuedKey> {
    const user = await this.getUser(userId);
    if (!user.keyHash) throw new RecordNotFoundError(`user ${user.id} has no key; use "key generate" to create one`);
    return this.writeKey(user.id, user.keyHash, seal);
  }

  /** The masked key and its creation time, or undefined when the user has none. */
  summary(user: StoredUser): KeySummary | undefined {
    if (!user.keyHash || !user.keyLastFour || !user.keyCreatedAt) return undefined;
    return { userId: user.id, masked: maskApiKey(user.keyLastFour), createdAt: user.keyCreatedAt };
  }

  async revoke(userId: string): Promise<void> {
    const user = await this.getUser(userId);
    if (!user.keyHash) throw new RecordNotFoundError(`user ${user.id} has no key`);
    // The key item goes first: from that moment the key no longer authenticates.
    await this.client.send(new DeleteCommand({ TableName: this.tableName, Key: itemKey.apiKey(user.keyHash) }));
    await this.conditionalKeyUpdate(user.id, user.keyHash, 'REMOVE keyHash, keyLastFour, keyCreatedAt, sealedKey');
  }

  private async writeKey(userId: string, oldHash: string | undefined, seal: SealKey | undefined): Promise<IssuedKey> {
    const key = generateApiKey();
    const keyHash = hashApiKey(key);
    const createdAt = this.now().toISOString();
    // Sealed beside its hash, in the same conditional write; a key made without sealing leaves none of the old one's.
    const sealed = seal ? await seal(key, userId) : undefined;
    // Old key out first (fail closed), then the conditional user update that commits the change
    // and loses cleanly to a concurrent generate/rotate, then the new key item that makes it work.
    if (oldHash) await this.client.send(new DeleteCommand({ TableName: this.tableName, Key: itemKey.apiKey(oldHash) }));
    const keyFields = 'SET keyHash = :new, keyLastFour = :lastFour, keyCreatedAt = :createdAt';
    await this.conditionalKeyUpdate(userId, oldHash, sealed ? `${keyFields}, sealedKey = :sealed` : `${keyFields} REMOVE sealedKey`, {
      ':new': keyHash,
      ':lastFour': keyLastFour(key),
      ':createdAt': createdAt,
      ...(sealed && { ':sealed': sealed }),
    });
    await this.client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...itemKey.apiKey(keyHash), userId, createdAt },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return { userId, key, createdAt };
  }

  /** Updates the user's key fields only if the stored key is still `expected` (none: no key). */
  private async conditionalKeyUpdate(userId: string, expected: string | undefined, expression: string, values: Item = {}): Promise<void> {
    await conditionally(
      () =>
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: itemKey.user(userId),
            UpdateExpression: expression,
            ConditionExpression: expected ? 'attribute_exists(pk) AND keyHash = :expected' : 'attribute_exists(pk) AND attribute_not_exists(keyHash)',
            ...((expected || Object.keys(values).length > 0) && { ExpressionAttributeValues: { ...values, ...(expected && { ':expected': expected }) } }),
          }),
        ),
      (cause) => new RecordConflictError(`the key of user ${userId} changed meanwhile; check it with "key show" and run the command again`, { cause }),
    );
  }
}

function toUser(id: string, item: Item): StoredUser {
  return {
    id,
    email: String(item.email),
    organizations: item.organizations instanceof Set ? [...(item.organizations as Set<string>)].sort() : [],
    ...(typeof item.keyHash === 'string' && {
      keyHash: item.keyHash,
      keyLastFour: String(item.keyLastFour),
      keyCreatedAt: String(item.keyCreatedAt),
      ...(typeof item.sealedKey === 'string' && { sealedKey: item.sealedKey }),
    }),
  };
}
