/**
 * Users and their one API key: the rules for generating, rotating, showing and revoking a key,
 * in one place for the admin command line and the self-service settings API alike.
 *
 * Who holds a key is decided by the user item alone: its `keyHash` names the one key that works
 * (authentication checks it, functions/shared/store/dynamodb-access-store.ts). The `KEY#<hash>`
 * item is only the index from a key to its user. dynalite (the local DynamoDB) has no
 * transactions, so a key change is the writes `keyChange` builds, applied one after another:
 *
 * 1. the new key's item, inert while the user does not name its hash;
 * 2. the commit: a conditional update of the user item, which loses cleanly to a concurrent
 *    generate/rotate/revoke (the condition is the user's current hash);
 * 3. the replaced key's item removed, inert since step 2.
 *
 * A change that loses at step 2 removes its own new item. However the writes interleave or are
 * delayed (security audit round 2, finding 1: a rotate's late write used to leave a key item that
 * outlived `revoke`), a key works only while its user names it; an item left behind by an
 * interrupted change authenticates nothing, and `sweepOrphans` (`key sweep`) removes it. The
 * three writes map one to one onto a TransactWriteItems, should the store ever need one.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DeleteCommandInput, PutCommandInput, UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { BatchGetCommand, DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { generateApiKey, hashApiKey, keyLastFour, maskApiKey } from '../domain/api-keys';
import type { KeyPolicy } from '../domain/key-policy';
import { KeyPolicyError, sendersOutside } from '../domain/key-policy';
import { parseEmailAddress } from '../domain/email-address';
import type { OrganizationLimits } from '../domain/org-limits';
import { readLimits } from '../domain/org-limits';
import type { Pause } from '../domain/reputation';
import type { Tracking } from '../mail/tracking';
import { readTracking } from '../mail/tracking';
import { conditionally } from './conditions';
import { SWEEP_MIN_AGE_MS, sweepOrphanKeys } from './key-sweep';
import { readPause } from './organization-pause';
import type { IssuedKey, KeySummary } from './records';
import { RecordConflictError, RecordNotFoundError } from './records';
import type { StoredUser } from './stored-user';
import { toUser } from './stored-user';
import { LAST_USED_ATTRIBUTE, LIMITS_ATTRIBUTE, ORGANIZATION_NAME_ATTRIBUTES, TRACKING_ATTRIBUTE, itemKey } from './table';

export type { StoredUser } from './stored-user';

type Item = Record<string, unknown>;

/** Seals a new key for its user before it is stored (the settings API, with reveal on); see functions/me/key-reveal.ts. */
export type SealKey = (key: string, userId: string) => Promise<string>;

/** How a new key is made: sealed for its owner (the settings API, reveal on), limited, or in test mode. */
export interface KeyOptions {
  readonly seal?: SealKey | undefined;
  readonly policy?: KeyPolicy | undefined;
  readonly test?: boolean | undefined;
}

/** The key fields a change sets on the user item: the hash, what the key may do, and the key sealed for its owner (reveal on). */
interface NewKeyFields {
  readonly keyHash: string;
  readonly keyLastFour: string;
  readonly keyCreatedAt: string;
  readonly sealedKey?: string | undefined;
  readonly keyScopes?: readonly string[] | undefined;
  readonly keySenders?: readonly string[] | undefined;
  readonly keyExpiresAt?: string | undefined;
  readonly keyTest?: boolean | undefined;
}
/** The optional fields of a key, each set when the new key has it and removed otherwise. */
const OPTIONAL_KEY_FIELDS = ['sealedKey', 'keyScopes', 'keySenders', 'keyExpiresAt', 'keyTest'] as const;

/** One key change, as the writes that make it (see the file's opening comment). */
interface KeyChange {
  readonly userId: string;
  /** The new key's item, written first: it authenticates only once the commit names its hash. */
  readonly put?: PutCommandInput;
  /** The conditional update of the user item: the change happens here, or not at all. */
  readonly commit: UpdateCommandInput;
  /** The replaced key's item, inert from the commit on. */
  readonly retire?: DeleteCommandInput;
}

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

  /**
   * The user with that e-mail address, if there is one: compared ASCII-case-insensitively, with
   * no other folding; an address the service would not take (a non-ASCII local part, CONTRACT
   * section 2) matches nobody.
   */
  async findUserByEmail(email: string): Promise<StoredUser | undefined> {
    const address = parseEmailAddress(email.trim());
    if (!address) return undefined;
    const { Item } = await this.client.send(new GetCommand({ TableName: this.tableName, Key: itemKey.email(address.ascii), ConsistentRead: true }));
    if (typeof Item?.userId !== 'string') return undefined;
    return this.getUser(Item.userId).catch((error: unknown) => {
      if (error instanceof RecordNotFoundError) return undefined;
      throw error;
    });
  }

  /** The user's Organizations with their names, limits, tracking defaults and pauses, sorted by name. */
  async organizationsOf(
    user: StoredUser,
  ): Promise<{ readonly id: string; readonly name: string; readonly limits: OrganizationLimits; readonly tracking: Tracking; readonly paused: Pause | undefined; readonly senders: ReadonlySet<string> }[]> {
    if (user.organizations.length === 0) return [];
    const { Responses } = await this.client.send(
      new BatchGetCommand({
        RequestItems: {
          [this.tableName]: {
            Keys: user.organizations.slice(0, 100).map((id) => itemKey.organization(id)),
            ConsistentRead: true,
            // What the settings API's IAM lets it read of an Organization, and all it needs.
            ProjectionExpression: ORGANIZATION_NAME_ATTRIBUTES.map((name) => `#${name}`).join(', '),
            ExpressionAttributeNames: Object.fromEntries(ORGANIZATION_NAME_ATTRIBUTES.map((name) => [`#${name}`, name])),
          },
        },
      }),
    );
    return (Responses?.[this.tableName] ?? [])
      .filter((item) => item.members instanceof Set && item.members.has(user.id))
      .map((item) => ({
        id: String(item.organizationId),
        name: String(item.name),
        limits: readLimits(item[LIMITS_ATTRIBUTE]),
        tracking: readTracking(item[TRACKING_ATTRIBUTE]),
        paused: readPause(item),
        senders: item.senders instanceof Set ? (item.senders as Set<string>) : new Set<string>(),
      }))
      .sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
  }

  /** Creates the user's key; refuses when the user already has one (that is `rotate`). */
  async generate(userId: string, options: KeyOptions = {}): Promise<IssuedKey> {
    const user = await this.getUser(userId);
    // A bad value is refused before the state is judged: the same answer whatever the user holds.
    await this.checkSenders(user, options.policy);
    if (user.keyHash) throw new RecordConflictError(`user ${user.id} already has a key; use "key rotate" to replace it`);
    return this.writeKey(user.id, undefined, options);
  }

  /** Replaces the user's key atomically: the old one stops working as the new one starts. */
  async rotate(userId: string, options: KeyOptions = {}): Promise<IssuedKey> {
    const user = await this.getUser(userId);
    await this.checkSenders(user, options.policy);
    if (!user.keyHash) throw new RecordNotFoundError(`user ${user.id} has no key; use "key generate" to create one`);
    return { ...(await this.writeKey(user.id, user.keyHash, options)), replacedKeyHash: user.keyHash };
  }

  /** A key may be limited to senders its user's Organizations have, and no others. */
  private async checkSenders(user: StoredUser, policy: KeyPolicy | undefined): Promise<void> {
    if (!policy?.senders) return;
    const outside = sendersOutside(policy.senders, (await this.organizationsOf(user)).map((organization) => organization.senders));
    if (outside.length > 0) throw new KeyPolicyError(`${outside.join(', ')} ${outside.length === 1 ? 'is not a sender identity' : 'are not sender identities'} of the Organizations of user ${user.id}`);
  }

  /** The masked key, its creation time, what it may do and when it was last used; undefined when the user has none. */
  async summary(user: StoredUser): Promise<KeySummary | undefined> {
    if (!user.keyHash || !user.keyLastFour || !user.keyCreatedAt) return undefined;
    const { Item } = await this.client.send(new GetCommand({ TableName: this.tableName, Key: itemKey.apiKey(user.keyHash), ProjectionExpression: LAST_USED_ATTRIBUTE }));
    const lastUsedAt = Item?.[LAST_USED_ATTRIBUTE];
    return {
      userId: user.id,
      masked: maskApiKey(user.keyLastFour, user.keyTest),
      createdAt: user.keyCreatedAt,
      policy: user.keyPolicy ?? {},
      test: user.keyTest === true,
      ...(typeof lastUsedAt === 'string' && { lastUsedAt }),
    };
  }

  /** Removes the user's key; returns the hash it had (the schedules that key made die with it). */
  async revoke(userId: string): Promise<string> {
    const user = await this.getUser(userId);
    if (!user.keyHash) throw new RecordNotFoundError(`user ${user.id} has no key`);
    await this.apply(this.keyChange(user.id, user.keyHash, undefined));
    return user.keyHash;
  }

  /** Removes the key items nobody holds, older than `minAgeMs` (key-sweep.ts); returns how many. */
  async sweepOrphans(minAgeMs: number = SWEEP_MIN_AGE_MS): Promise<number> {
    const before = new Date(this.now().getTime() - minAgeMs).toISOString();
    return sweepOrphanKeys({ client: this.client, tableName: this.tableName, before, userOf: (id) => this.getUser(id).catch(() => undefined) });
  }

  private async writeKey(userId: string, oldHash: string | undefined, options: KeyOptions): Promise<IssuedKey> {
    const { seal, policy = {}, test } = options;
    const key = generateApiKey({ test: test === true });
    const createdAt = this.now().toISOString();
    // Sealed beside its hash, in the same conditional write; a key made without sealing leaves none of the old one's.
    const sealedKey = seal ? await seal(key, userId) : undefined;
    await this.apply(
      this.keyChange(userId, oldHash, {
        keyHash: hashApiKey(key),
        keyLastFour: keyLastFour(key),
        keyCreatedAt: createdAt,
        sealedKey,
        keyScopes: policy.scopes,
        keySenders: policy.senders,
        keyExpiresAt: policy.expiresAt,
        keyTest: test === true ? true : undefined,
      }),
    );
    return { userId, key, createdAt };
  }

  /**
   * The writes that move the user from the key `oldHash` (none: no key) to `next` (none: no
   * key). The one place a key change is defined: generate, rotate and revoke all come here.
   */
  private keyChange(userId: string, oldHash: string | undefined, next: NewKeyFields | undefined): KeyChange {
    const condition = oldHash ? 'attribute_exists(pk) AND keyHash = :expected' : 'attribute_exists(pk) AND attribute_not_exists(keyHash)';
    const values: Item = { ...(oldHash && { ':expected': oldHash }) };
    let update = `REMOVE keyHash, keyLastFour, keyCreatedAt, ${OPTIONAL_KEY_FIELDS.join(', ')}`;
    if (next) {
      // What the new key has is set, what it has not is removed: nothing of the old key's limits survives it.
      const set = OPTIONAL_KEY_FIELDS.filter((field) => next[field] !== undefined);
      const remove = OPTIONAL_KEY_FIELDS.filter((field) => next[field] === undefined);
      update = `SET ${['keyHash', 'keyLastFour', 'keyCreatedAt', ...set].map((field) => `${field} = :${field}`).join(', ')}${remove.length > 0 ? ` REMOVE ${remove.join(', ')}` : ''}`;
      for (const field of ['keyHash', 'keyLastFour', 'keyCreatedAt', ...set] as const) values[`:${field}`] = next[field];
    }
    return {
      userId,
      ...(next && {
        put: {
          TableName: this.tableName,
          Item: { ...itemKey.apiKey(next.keyHash), userId, createdAt: next.keyCreatedAt },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      }),
      commit: {
        TableName: this.tableName,
        Key: itemKey.user(userId),
        UpdateExpression: update,
        ConditionExpression: condition,
        ...(Object.keys(values).length > 0 && { ExpressionAttributeValues: values }),
      },
      ...(oldHash && { retire: { TableName: this.tableName, Key: itemKey.apiKey(oldHash) } }),
    };
  }

  /** Applies a key change in its order; a change that loses the commit takes its new item back. */
  private async apply(change: KeyChange): Promise<void> {
    const { userId, put } = change;
    if (put) await this.client.send(new PutCommand(put));
    try {
      await conditionally(
        () => this.client.send(new UpdateCommand(change.commit)),
        (cause) => new RecordConflictError(`the key of user ${userId} changed meanwhile; check it with "key show" and run the command again`, { cause }),
      );
    } catch (error) {
      // Best effort: if this fails too, the item is inert anyway and `key sweep` removes it.
      if (put?.Item) await this.client.send(new DeleteCommand({ TableName: this.tableName, Key: { pk: put.Item.pk, sk: put.Item.sk } })).catch(() => undefined);
      throw error;
    }
    if (change.retire) await this.client.send(new DeleteCommand(change.retire));
  }
}
