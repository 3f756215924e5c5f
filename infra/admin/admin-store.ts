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
import { parseEmailAddress } from '../../functions/shared/domain/email-address';
import type { SenderIdentity } from '../../functions/shared/domain/sender-identity';
import { storedSenderIdentity } from '../../functions/shared/domain/sender-identity';
import { conditionally } from '../../functions/shared/store/conditions';
import type { StoredUser } from '../../functions/shared/store/dynamodb-key-store';
import { DynamoDbKeyStore } from '../../functions/shared/store/dynamodb-key-store';
import type { KeyOptions } from '../../functions/shared/store/dynamodb-key-store';
import { isCanonicalUuid } from '../../functions/shared/domain/uuid';
import { itemKey } from '../../functions/shared/store/table';
import { OrganizationLimitsStore } from './limits-store';
import type { Suppression } from '../../functions/shared/store/dynamodb-suppression-store';
import { DynamoDbSuppressionStore } from '../../functions/shared/store/dynamodb-suppression-store';
import { newWebhookSecret } from '../../functions/shared/webhooks/payload';
import type { SecretSealer } from '../../functions/shared/webhooks/sealing';
import { webhookUrlProblem } from '../../functions/shared/webhooks/webhook-url';
import { DynamoDbWebhookStore } from '../../functions/shared/webhooks/webhook-store';
import type { IssuedKey, KeySummary, Organization, Person } from '../../functions/shared/store/records';
import { InvalidArgumentError, RecordConflictError, RecordNotFoundError } from '../../functions/shared/store/records';

export type { SenderIdentity } from '../../functions/shared/domain/sender-identity';
export * from '../../functions/shared/store/records';

export function requireUuid(value: string, what: string): string {
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
  private readonly keys: DynamoDbKeyStore;
  private readonly suppressions: DynamoDbSuppressionStore;
  private readonly webhooks: DynamoDbWebhookStore;
  /** The Organizations' limits and today's use of their daily quotas (limits-store.ts). */
  readonly limits: OrganizationLimitsStore;

  constructor(
    /** Public for the command modules that keep their own stores beside this one (org-commands.ts). */
    readonly client: DynamoDBDocumentClient,
    readonly tableName: string,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.keys = new DynamoDbKeyStore(client, tableName, now);
    this.suppressions = new DynamoDbSuppressionStore(client, tableName);
    this.webhooks = new DynamoDbWebhookStore(client, tableName);
    this.limits = new OrganizationLimitsStore(client, tableName, now);
  }

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

  async createUser(input: { email: string }): Promise<Person> {
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

  async getUser(userId: string): Promise<StoredUser> {
    return this.keys.getUser(requireUuid(userId, 'the user id'));
  }

  async addMember(organizationId: string, userId: string): Promise<void> {
    const org = requireUuid(organizationId, 'the Organization id');
    const user = requireUuid(userId, 'the user id');
    const found = await this.getUser(user);
    // A service user is an integration of one Organization (docs/keys.md): it joins no other, also
    // once removed from its own. One made before its Organization was recorded has the one it is
    // in, or, outside all, the first it joins: recorded now, on the condition that none was since.
    if (found.serviceName !== undefined) {
      const refused = (home: string) => new RecordConflictError(`user ${user} is a service user of ${home}; a service user belongs to one Organization only`);
      const home = found.serviceOrganization ?? found.organizations[0] ?? org;
      if (home !== org) throw refused(`Organization ${home}`);
      if (found.serviceOrganization === undefined) {
        const claim = { UpdateExpression: 'SET serviceOrganization = :org', ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(serviceOrganization) OR serviceOrganization = :org)' };
        await conditionally(() => this.client.send(new UpdateCommand({ TableName: this.tableName, Key: itemKey.user(user), ...claim, ExpressionAttributeValues: { ':org': org } })), () => refused('another Organization'));
      }
    }
    await this.addToSet(org, 'members', user);
    await this.userOrganizations(user, 'ADD', org);
  }

  async removeMember(organizationId: string, userId: string): Promise<void> {
    const org = requireUuid(organizationId, 'the Organization id');
    const user = requireUuid(userId, 'the user id');
    await this.removeFromSet(org, 'members', user, `user ${user} is not a member of Organization ${org}`);
    await this.userOrganizations(user, 'DELETE', org);
  }

  /**
   * The user's own list of Organizations, for the settings page. The Organization's member set
   * stays the authority (it is written first, and readers check it), so a list that lags behind
   * it can only show too little, never grant anything.
   */
  private async userOrganizations(userId: string, change: 'ADD' | 'DELETE', organizationId: string): Promise<void> {
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: itemKey.user(userId),
        UpdateExpression: `${change} organizations :org`,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':org': new Set([organizationId]) },
      }),
    );
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

  /** Creates the user's key, limited as `options` say; refuses when the user already has one (that is `rotateKey`). */
  generateKey(userId: string, options: KeyOptions = {}): Promise<IssuedKey> {
    return this.keys.generate(requireUuid(userId, 'the user id'), options);
  }

  /** Replaces the user's key atomically: the old one stops working as the new one starts. */
  rotateKey(userId: string, options: KeyOptions = {}): Promise<IssuedKey> {
    return this.keys.rotate(requireUuid(userId, 'the user id'), options);
  }

  async showKey(userId: string): Promise<KeySummary> {
    const user = await this.getUser(userId);
    const summary = await this.keys.summary(user);
    if (!summary) throw new RecordNotFoundError(`user ${user.id} has no key`);
    return summary;
  }

  revokeKey(userId: string): Promise<string> {
    return this.keys.revoke(requireUuid(userId, 'the user id'));
  }

  /** Removes key items no user holds (left by interrupted key changes); returns how many. */
  sweepKeys(): Promise<number> {
    return this.keys.sweepOrphans();
  }

  async listSuppressions(organizationId: string): Promise<Suppression[]> {
    const org = (await this.getOrganization(organizationId)).id;
    return (await this.suppressions.list(org)).sort((a, b) => (a.address < b.address ? -1 : 1));
  }

  /** Takes an address off the Organization's suppression list; it may be sent to again. */
  async removeSuppression(organizationId: string, address: string): Promise<string> {
    const org = (await this.getOrganization(organizationId)).id;
    const parsed = parseEmailAddress(address.trim());
    if (!parsed) throw new InvalidArgumentError(`"${address}" is not a valid email address`);
    const stored = parsed.ascii.toLowerCase();
    if (!(await this.suppressions.remove(org, stored))) throw new RecordNotFoundError(`${stored} is not on the suppression list of Organization ${org}`);
    return stored;
  }

  /** Sets (or replaces) the Organization's webhook; returns the new signing secret, which is stored only sealed. */
  async setWebhook(organizationId: string, url: string, sealer: SecretSealer, allowLoopbackHttp: boolean): Promise<string> {
    const org = (await this.getOrganization(organizationId)).id;
    const problem = webhookUrlProblem(url, allowLoopbackHttp);
    if (problem) throw new InvalidArgumentError(problem);
    const secret = newWebhookSecret();
    await this.webhooks.put({ organizationId: org, url, sealedSecret: await sealer.seal(secret, org), createdAt: this.now().toISOString() });
    return secret;
  }

  async removeWebhook(organizationId: string): Promise<void> {
    const org = requireUuid(organizationId, 'the Organization id');
    if (!(await this.webhooks.remove(org))) throw new RecordNotFoundError(`Organization ${org} has no webhook`);
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
