/**
 * The operator's writes: Organizations, users, memberships, sender identities and keys.
 * Used by the admin command line, locally or against the deployed table.
 *
 * dynalite (the local DynamoDB) has no transactions, so a change that touches several items is
 * a sequence of single-item writes. Each sequence has one conditional write on the user or
 * Organization item as its commit point (that is what keeps "at most one key per user" true
 * under races), and is ordered so that an interruption fails closed: a key that should stop
 * working never keeps working; at worst the user is left with no working key and the operator
 * runs `key rotate` again.
 */
import { randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { generateApiKey, hashApiKey, keyLastFour, maskApiKey } from '../../functions/shared/domain/api-keys';
import { parseEmailAddress } from '../../functions/shared/domain/email-address';
import type { SenderIdentity } from '../../functions/shared/domain/sender-identity';
import { storedSenderIdentity } from '../../functions/shared/domain/sender-identity';
import { conditionally } from '../../functions/shared/store/conditions';
import { isCanonicalUuid } from '../../functions/shared/domain/uuid';
import { itemKey } from '../../functions/shared/store/table';
import type { IssuedKey, KeySummary, Organization, User } from './records';
import { InvalidArgumentError, RecordConflictError, RecordNotFoundError } from './records';

export type { SenderIdentity } from '../../functions/shared/domain/sender-identity';
export * from './records';

function requireUuid(value: string, what: string): string {
  if (!isCanonicalUuid(value)) throw new InvalidArgumentError(`${what} must be a UUID (8-4-4-4-12 hex), got "${value}"`);
  return value.toLowerCase();
}

/** The stored form of a sender identity (see sender-identity.ts), or an argument error. */
export function normaliseSenderIdentity(identity: SenderIdentity): string {
  const stored = storedSenderIdentity(identity);
  if (stored !== undefined) return stored;
  throw new InvalidArgumentError('domain' in identity ? `"${identity.domain}" is not a domain name` : `"${identity.address}" is not a valid email address`);
}

export class DynamoDbAdminStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async createOrganization(input: { name: string; id?: string }): Promise<Organization> {
    const name = input.name.trim();
    if (!name) throw new InvalidArgumentError('the Organization name must not be empty');
    const id = input.id === undefined ? randomUUID() : requireUuid(input.id, 'the Organization id');
    await conditionally(
      () =>
        this.client.send(
          new PutCommand({
            TableName: this.tableName,
            Item: { ...itemKey.organization(id), organizationId: id, name, createdAt: this.now().toISOString() },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        ),
      (cause) => new RecordConflictError(`an Organization with id ${id} already exists`, { cause }),
    );
    return { id, name, members: [], senders: [] };
  }

  async getOrganization(organizationId: string): Promise<Organization> {
    const id = requireUuid(organizationId, 'the Organization id');
    const Item = await this.getItem(itemKey.organization(id), `no Organization with id ${id}`);
    return {
      id,
      name: String(Item.name),
      members: [...((Item.members as Set<string> | undefined) ?? [])].sort(),
      senders: [...((Item.senders as Set<string> | undefined) ?? [])].sort(),
    };
  }

  async createUser(input: { email: string }): Promise<User> {
    const address = parseEmailAddress(input.email.trim());
    if (!address) throw new InvalidArgumentError(`"${input.email}" is not a valid email address`);
    const id = randomUUID();
    const email = address.ascii;
    await this.client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...itemKey.user(id), userId: id, email, createdAt: this.now().toISOString() },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    try {
      // The e-mail item reserves the address; losing that race undoes the user just written.
      await conditionally(
        () =>
          this.client.send(
            new PutCommand({
              TableName: this.tableName,
              Item: { ...itemKey.email(email), userId: id },
              ConditionExpression: 'attribute_not_exists(pk)',
            }),
          ),
        (cause) => new RecordConflictError(`a user with email ${email} already exists`, { cause }),
      );
    } catch (error) {
      await this.client.send(new DeleteCommand({ TableName: this.tableName, Key: itemKey.user(id) }));
      throw error;
    }
    return { id, email };
  }

  async getUser(userId: string): Promise<User & { keyHash?: string; keyLastFour?: string; keyCreatedAt?: string }> {
    const id = requireUuid(userId, 'the user id');
    const Item = await this.getItem(itemKey.user(id), `no user with id ${id}`);
    return {
      id,
      email: String(Item.email),
      ...(typeof Item.keyHash === 'string' && {
        keyHash: Item.keyHash,
        keyLastFour: String(Item.keyLastFour),
        keyCreatedAt: String(Item.keyCreatedAt),
      }),
    };
  }

  async addMember(organizationId: string, userId: string): Promise<void> {
    const org = requireUuid(organizationId, 'the Organization id');
    const user = requireUuid(userId, 'the user id');
    await this.getUser(user);
    await this.addToSet(org, 'members', user);
  }

  async removeMember(organizationId: string, userId: string): Promise<void> {
    const org = requireUuid(organizationId, 'the Organization id');
    const user = requireUuid(userId, 'the user id');
    await this.removeFromSet(org, 'members', user, `user ${user} is not a member of Organization ${org}`);
  }

  async addSender(organizationId: string, identity: SenderIdentity): Promise<string> {
    const org = requireUuid(organizationId, 'the Organization id');
    const sender = normaliseSenderIdentity(identity);
    await this.addToSet(org, 'senders', sender);
    return sender;
  }

  async removeSender(organizationId: string, identity: SenderIdentity): Promise<string> {
    const org = requireUuid(organizationId, 'the Organization id');
    const sender = normaliseSenderIdentity(identity);
    await this.removeFromSet(org, 'senders', sender, `${sender} is not a sender identity of Organization ${org}`);
    return sender;
  }

  /** Creates the user's key; refuses when the user already has one (that is `rotateKey`). */
  async generateKey(userId: string): Promise<IssuedKey> {
    const user = await this.getUser(userId);
    if (user.keyHash) throw new RecordConflictError(`user ${user.id} already has a key; use "key rotate" to replace it`);
    return this.writeKey(user.id, undefined);
  }

  /** Replaces the user's key atomically: the old one stops working as the new one starts. */
  async rotateKey(userId: string): Promise<IssuedKey> {
    const user = await this.getUser(userId);
    if (!user.keyHash) throw new RecordNotFoundError(`user ${user.id} has no key; use "key generate" to create one`);
    return this.writeKey(user.id, user.keyHash);
  }

  async showKey(userId: string): Promise<KeySummary> {
    const user = await this.getUser(userId);
    if (!user.keyHash || !user.keyLastFour || !user.keyCreatedAt) throw new RecordNotFoundError(`user ${user.id} has no key`);
    return { userId: user.id, masked: maskApiKey(user.keyLastFour), createdAt: user.keyCreatedAt };
  }

  async revokeKey(userId: string): Promise<void> {
    const user = await this.getUser(userId);
    if (!user.keyHash) throw new RecordNotFoundError(`user ${user.id} has no key`);
    // The key item goes first: from that moment the key no longer authenticates.
    await this.client.send(new DeleteCommand({ TableName: this.tableName, Key: itemKey.apiKey(user.keyHash) }));
    await this.conditionalKeyUpdate(user.id, user.keyHash, {
      UpdateExpression: 'REMOVE keyHash, keyLastFour, keyCreatedAt',
    });
  }

  private async writeKey(userId: string, oldHash: string | undefined): Promise<IssuedKey> {
    const key = generateApiKey();
    const keyHash = hashApiKey(key);
    const createdAt = this.now().toISOString();
    // Old key out first (fail closed), then the conditional user update that commits the change
    // and loses cleanly to a concurrent generate/rotate, then the new key item that makes it work.
    if (oldHash) await this.client.send(new DeleteCommand({ TableName: this.tableName, Key: itemKey.apiKey(oldHash) }));
    await this.conditionalKeyUpdate(userId, oldHash, {
      UpdateExpression: 'SET keyHash = :new, keyLastFour = :lastFour, keyCreatedAt = :createdAt',
      ExpressionAttributeValues: { ':new': keyHash, ':lastFour': keyLastFour(key), ':createdAt': createdAt },
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
  private async conditionalKeyUpdate(
    userId: string,
    expected: string | undefined,
    update: { UpdateExpression: string; ExpressionAttributeValues?: Record<string, unknown> },
  ): Promise<void> {
    await this.updateIf(
      itemKey.user(userId),
      update.UpdateExpression,
      expected ? 'attribute_exists(pk) AND keyHash = :expected' : 'attribute_exists(pk) AND attribute_not_exists(keyHash)',
      { ...update.ExpressionAttributeValues, ...(expected && { ':expected': expected }) },
      async (cause) => new RecordConflictError(`the key of user ${userId} changed meanwhile; check it with "key show" and run the command again`, { cause }),
    );
  }

  /** One item, read strongly consistent, or the not-found error with `missing` as its message. */
  private async getItem(key: Record<string, string>, missing: string): Promise<Record<string, unknown>> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }));
    if (!Item) throw new RecordNotFoundError(missing);
    return Item;
  }

  private async addToSet(org: string, attribute: 'members' | 'senders', value: string): Promise<void> {
    await this.changeSet(org, attribute, 'ADD', value, async (cause) => new RecordNotFoundError(`no Organization with id ${org}`, { cause }));
  }

  private async removeFromSet(org: string, attribute: 'members' | 'senders', value: string, notThere: string): Promise<void> {
    await this.changeSet(org, attribute, 'DELETE', value, async (cause) => {
      await this.getOrganization(org); // a missing Organization is the better message
      return new RecordNotFoundError(notThere, { cause });
    });
  }

  /** Adds a value to, or deletes it from, a set on the Organization item; conditional on the item (and, to delete, the value) being there. */
  private async changeSet(
    org: string,
    attribute: 'members' | 'senders',
    change: 'ADD' | 'DELETE',
    value: string,
    refusal: (cause: Error) => Promise<Error>,
  ): Promise<void> {
    await this.updateIf(
      itemKey.organization(org),
      `${change} ${attribute} :value`,
      change === 'ADD' ? 'attribute_exists(pk)' : `attribute_exists(pk) AND contains(${attribute}, :one)`,
      { ':value': new Set([value]), ...(change === 'DELETE' && { ':one': value }) },
      refusal,
    );
  }

  /** One conditional update; a failed condition becomes the domain error `refusal` makes. */
  private async updateIf(
    key: Record<string, string>,
    expression: string,
    condition: string,
    values: Record<string, unknown>,
    refusal: (cause: Error) => Promise<Error>,
  ): Promise<void> {
    await conditionally(
      () =>
        this.client.send(
          new UpdateCommand({ TableName: this.tableName, Key: key, UpdateExpression: expression, ConditionExpression: condition, ExpressionAttributeValues: values }),
        ),
      refusal,
    );
  }
}
