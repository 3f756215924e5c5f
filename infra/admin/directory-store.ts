/**
 * Find and undo (the admin CLI's `org list|delete`, `user list|show|delete`): what the operator
 * made, read back and taken away again. Listing every Organization or user is a filtered scan of
 * the table, which is fine for an operator's one-off and never on a request path.
 *
 * Deletes run in the order that fails closed, as the admin store's writes do (admin-store.ts):
 * a user's key is revoked first, so an interrupted `user delete` leaves at worst a user without a
 * key; an Organization loses its members, its pending scheduled messages and its SES tenant
 * before its own item, so an interrupted `org delete --force` can be run again.
 */
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { batchGetAll } from '../../functions/shared/store/batch-get';
import type { StoredUser } from '../../functions/shared/store/dynamodb-key-store';
import { DynamoDbKeyStore } from '../../functions/shared/store/dynamodb-key-store';
import { unlessConditionFails } from '../../functions/shared/store/conditions';
import { scanAll } from '../../functions/shared/store/query-all';
import type { KeySummary, Organization, User } from '../../functions/shared/store/records';
import { RecordConflictError, RecordNotFoundError } from '../../functions/shared/store/records';
import { cancelSchedule, retireKeySchedules } from '../../functions/shared/schedules/key-schedules';
import { COUNT_KEY, organizationSchedulesPartition } from '../../functions/shared/schedules/organization-schedules';
import { PARTITIONS, itemKey } from '../../functions/shared/store/table';
import type { DynamoDbAdminStore } from './admin-store';
import type { AdminCancelling } from './cancelling';
import { adminCancelling, untold } from './cancelling';

type Item = Record<string, unknown>;

/** A user as `user show` prints it: the Organizations it is a member of, and its key masked. */
export interface UserDetails extends User {
  readonly organizations: readonly string[];
  readonly key: KeySummary | undefined;
}

/** What `org delete` took away with the Organization. */
export interface RemovedOrganization {
  readonly id: string;
  readonly members: readonly string[];
  readonly cancelledSchedules: readonly string[];
  readonly senders: readonly string[];
}

/**
 * Each item of the table with that sort key under that partition prefix (and matching `filter`,
 * whose `#names` are attributes): a paged, filtered scan reading `attributes`.
 */
export function scanKind(
  store: DynamoDbAdminStore,
  kind: { readonly prefix: string; readonly sortKey: string },
  attributes: readonly string[],
  filter: { readonly expression: string; readonly names: readonly string[]; readonly values: Item } = { expression: '', names: [], values: {} },
): Promise<Item[]> {
  return scanAll(store.client, {
    TableName: store.tableName,
    FilterExpression: `sk = :sk AND begins_with(pk, :prefix)${filter.expression ? ` AND ${filter.expression}` : ''}`,
    ExpressionAttributeValues: { ':sk': kind.sortKey, ':prefix': kind.prefix, ...filter.values },
    // Every name through a placeholder: several (name, state) are DynamoDB reserved words.
    ProjectionExpression: attributes.map((name) => `#${name}`).join(', '),
    ExpressionAttributeNames: Object.fromEntries([...attributes, ...filter.names].map((name) => [`#${name}`, name])),
  });
}

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

export class AdminDirectory {
  private readonly keys: DynamoDbKeyStore;

  /** `cancelling`: how its deletes cancel scheduled messages (cancelling.ts); by default their notices wait for their time. */
  constructor(
    private readonly store: DynamoDbAdminStore,
    private readonly cancelling: AdminCancelling = adminCancelling(store, undefined, () => undefined),
  ) {
    this.keys = new DynamoDbKeyStore(store.client, store.tableName);
  }

  /** Every Organization, by name then id. */
  async organizations(): Promise<Organization[]> {
    const items = await scanKind(this.store, { prefix: PARTITIONS.organization, sortKey: 'ORG' }, ['organizationId', 'name', 'members', 'senders']);
    return items
      .map((item) => ({
        id: String(item.organizationId),
        name: String(item.name),
        members: [...((item.members as Set<string> | undefined) ?? [])].sort(),
        senders: [...((item.senders as Set<string> | undefined) ?? [])].sort(),
      }))
      .sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
  }

  /** Every user, or the members of one Organization, people and service users alike; by e-mail address or service name. */
  async users(organizationId?: string): Promise<User[]> {
    const items =
      organizationId === undefined
        ? await scanKind(this.store, { prefix: PARTITIONS.user, sortKey: 'USER' }, ['userId', 'email', 'serviceName'])
        : await batchGetAll(this.store.client, this.store.tableName, (await this.store.getOrganization(organizationId)).members.map((id) => itemKey.user(id)), {
            projection: 'userId, email, serviceName',
            consistent: true,
          });
    const label = (user: User) => user.email ?? user.serviceName ?? '';
    return items
      .map((item) => ({
        id: String(item.userId),
        ...(typeof item.email === 'string' && { email: item.email }),
        ...(typeof item.serviceName === 'string' && { serviceName: item.serviceName }),
      }))
      .sort((a, b) => label(a).localeCompare(label(b)) || a.id.localeCompare(b.id));
  }

  /** The user with that id, or with that e-mail address (compared as the service compares them). */
  async user(by: { readonly id: string } | { readonly email: string }): Promise<UserDetails> {
    let user: StoredUser | undefined;
    if ('id' in by) user = await this.store.getUser(by.id);
    else user = await this.keys.findUserByEmail(by.email);
    if (!user) throw new RecordNotFoundError(`no user with email ${'email' in by ? by.email : ''}`);
    const organizations = (await this.organizations()).filter((org) => org.members.includes(user.id)).map((org) => org.id);
    return { id: user.id, ...(user.email !== undefined && { email: user.email }), ...(user.serviceName !== undefined && { serviceName: user.serviceName }), organizations, key: await this.keys.summary(user) };
  }

  /**
   * Removes the user: its key first (it stops working, and the messages it scheduled are
   * cancelled, as with `key revoke`), then its memberships, its e-mail item and itself.
   */
  async deleteUser(userId: string): Promise<UserDetails & { readonly cancelledSchedules: readonly string[] }> {
    const details = await this.user({ id: userId });
    const cancelled: string[] = [];
    if (details.key) {
      const oldHash = await this.store.revokeKey(details.id);
      cancelled.push(...(await retireKeySchedules({ id: details.id, organizations: details.organizations }, oldHash, undefined, this.cancelling)).cancelled);
    }
    for (const organizationId of details.organizations) await this.store.removeMember(organizationId, details.id);
    // The e-mail item only while it still names this user: a new user may have taken the address since.
    const { email } = details;
    if (email !== undefined) {
      await unlessConditionFails(() =>
        this.store.client.send(
          new DeleteCommand({ TableName: this.store.tableName, Key: itemKey.email(email), ConditionExpression: 'userId = :id', ExpressionAttributeValues: { ':id': details.id } }),
        ),
      );
    }
    await this.store.client.send(new DeleteCommand({ TableName: this.store.tableName, Key: itemKey.user(details.id) }));
    return { ...details, cancelledSchedules: cancelled };
  }

  /** The Organization's scheduled messages not yet sent, as `schedule list` shows them. */
  async pendingSchedules(organizationId: string): Promise<string[]> {
    return (await this.cancelling.organizations.list(organizationId)).map((entry) => entry.scheduleId);
  }

  /**
   * Removes the Organization. Refused while it has members, pending scheduled messages or sender
   * identities (with tenants on, associated with its SES tenant), unless `force`, which takes those
   * away first. `removeTenant` (with tenants on; undefined when off) deletes its SES tenant once
   * nothing uses it.
   */
  async deleteOrganization(organizationId: string, force: boolean, removeTenant: ((id: string) => Promise<void>) | undefined): Promise<RemovedOrganization> {
    const organization = await this.store.getOrganization(organizationId);
    const { id, members, senders } = organization;
    const pending = await this.pendingSchedules(id);
    const blockers = [
      members.length > 0 && plural(members.length, 'member'),
      pending.length > 0 && plural(pending.length, 'pending scheduled message'),
      senders.length > 0 && `${senders.length} sender ${senders.length === 1 ? 'identity' : 'identities'}${removeTenant ? ' (associated with its SES tenant)' : ''}`,
    ].filter((blocker): blocker is string => typeof blocker === 'string');
    if (blockers.length > 0 && !force) {
      throw new RecordConflictError(`Organization ${id} still has ${blockers.join(', ')}; remove them first, or pass --force to remove them with it`);
    }
    const cancelled: string[] = [];
    // Told to nobody: the Organization's webhook goes with it below (cancelling.ts, `untold`).
    const telling = untold(this.cancelling);
    for (const head of (await this.cancelling.schedules.heads(pending)).values()) if (await cancelSchedule(head, telling)) cancelled.push(head.scheduleId);
    for (const member of members) await this.store.removeMember(id, member);
    await removeTenant?.(id);
    // Its own records; message statuses, Activity and daily counts expire on their own (TTL).
    const suppressions = (await this.store.listSuppressions(id)).map(({ address }) => itemKey.suppression(id, address));
    const pendingCount = { pk: organizationSchedulesPartition(id), sk: COUNT_KEY };
    for (const key of [...suppressions, pendingCount, itemKey.webhook(id), itemKey.reputation(id), itemKey.organization(id)]) {
      await this.store.client.send(new DeleteCommand({ TableName: this.store.tableName, Key: key }));
    }
    return { id, members, cancelledSchedules: cancelled, senders };
  }
}
