/**
 * The operator's repository against dynalite: records, the one-key rule, rotation and revocation.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { hashApiKey, isWellFormedApiKey } from '../../functions/shared/domain/api-keys';
import { createDynamoDbClient } from '../../functions/shared/runtime/clients';
import { DynamoDbAccessStore } from '../../functions/shared/store/dynamodb-access-store';
import { DynamoDbKeyStore } from '../../functions/shared/store/dynamodb-key-store';
import { InvalidArgumentError, RecordConflictError, RecordNotFoundError } from '../../infra/admin/admin-store';
import { OrganizationTrackingStore } from '../../infra/admin/tracking-store';
import { itemKey } from '../../functions/shared/store/table';
import type { Harness } from '../support/harness';
import { startHarness } from '../support/harness';

let h!: Harness;
let access: DynamoDbAccessStore;

beforeAll(async () => {
  h = await startHarness();
  access = new DynamoDbAccessStore(createDynamoDbClient(h.config), h.config.tableName);
});
afterAll(async () => h.stop());

const newUser = async () => h.admin.createUser({ email: `u${Math.random().toString(36).slice(2)}@example.net` });

describe('DynamoDbAdminStore', () => {
  it('creates an Organization with a given id, and refuses a duplicate', async () => {
    const id = '0f8fad5b-d9cb-469f-a165-70867728950e';
    await expect(h.admin.createOrganization({ name: 'Acme', id: id.toUpperCase() })).resolves.toMatchObject({ id });
    await expect(h.admin.createOrganization({ name: 'Again', id })).rejects.toBeInstanceOf(RecordConflictError);
  });

  it('refuses a malformed Organization id and an empty name', async () => {
    await expect(h.admin.createOrganization({ name: 'x', id: 'nope' })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(h.admin.createOrganization({ name: '  ' })).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('creates users with unique e-mail addresses', async () => {
    const user = await h.admin.createUser({ email: 'Unique@Example.NET' });
    expect(user.email).toBe('Unique@example.net');
    await expect(h.admin.createUser({ email: 'unique@example.net' })).rejects.toBeInstanceOf(RecordConflictError);
    await expect(h.admin.createUser({ email: 'not an address' })).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('adds and removes members and senders, and reports what is missing', async () => {
    const org = await h.admin.createOrganization({ name: 'Acme' });
    const user = await newUser();
    await h.admin.addMember(org.id, user.id);
    await h.admin.addSender(org.id, { domain: 'Bücher.DE' });
    await h.admin.addSender(org.id, { address: 'Billing@Acme.test' });
    expect(await h.admin.getOrganization(org.id)).toMatchObject({ members: [user.id], senders: ['billing@acme.test', 'xn--bcher-kva.de'] });
    await h.admin.removeMember(org.id, user.id);
    await h.admin.removeSender(org.id, { domain: 'bücher.de' });
    expect(await h.admin.getOrganization(org.id)).toMatchObject({ members: [], senders: ['billing@acme.test'] });
    await expect(h.admin.removeMember(org.id, user.id)).rejects.toBeInstanceOf(RecordNotFoundError);
    await expect(h.admin.addMember(org.id, '7c9e6679-7425-40de-944b-e07fc1f90ae7')).rejects.toThrow(/no user/);
    await expect(h.admin.addMember('7c9e6679-7425-40de-944b-e07fc1f90ae7', user.id)).rejects.toThrow(/no Organization/);
    await expect(h.admin.addSender(org.id, { domain: 'not a domain' })).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('stores only the hash of a generated key, and finds the user by it', async () => {
    const user = await newUser();
    const issued = await h.admin.generateKey(user.id);
    expect(isWellFormedApiKey(issued.key)).toBe(true);
    const stored = await createDynamoDbClient(h.config).send(new GetCommand({ TableName: h.config.tableName, Key: itemKey.user(user.id) }));
    expect(JSON.stringify(stored.Item)).not.toContain(issued.key);
    expect(stored.Item?.keyHash).toBe(hashApiKey(issued.key));
    expect(await access.lookup(hashApiKey(issued.key), undefined)).toEqual({ key: { userId: user.id, policy: {} } });
  });

  it('refuses a second key: rotation is explicit', async () => {
    const user = await newUser();
    await h.admin.generateKey(user.id);
    await expect(h.admin.generateKey(user.id)).rejects.toBeInstanceOf(RecordConflictError);
  });

  it('keeps one key per user when two generates race', async () => {
    const user = await newUser();
    const outcomes = await Promise.allSettled([h.admin.generateKey(user.id), h.admin.generateKey(user.id), h.admin.generateKey(user.id)]);
    const issued = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value.key] : []));
    expect(issued).toHaveLength(1);
    const working = await Promise.all(outcomes.map(async (o) => (o.status === 'fulfilled' ? (await access.lookup(hashApiKey(o.value.key), undefined)).key : undefined)));
    expect(working.filter(Boolean)).toHaveLength(1);
  });

  it('rotates: the old key stops working, the new one works, the mask changes', async () => {
    const user = await newUser();
    const first = await h.admin.generateKey(user.id);
    const second = await h.admin.rotateKey(user.id);
    expect(second.key).not.toBe(first.key);
    expect((await access.lookup(hashApiKey(first.key), undefined)).key).toBeUndefined();
    expect((await access.lookup(hashApiKey(second.key), undefined)).key).toEqual({ userId: user.id, policy: {} });
    expect((await h.admin.showKey(user.id)).masked).toBe(`tme_…${second.key.slice(-4)}`);
  });

  it('revokes: the key stops working and there is nothing left to show or rotate', async () => {
    const user = await newUser();
    const issued = await h.admin.generateKey(user.id);
    await h.admin.revokeKey(user.id);
    expect((await access.lookup(hashApiKey(issued.key), undefined)).key).toBeUndefined();
    await expect(h.admin.showKey(user.id)).rejects.toBeInstanceOf(RecordNotFoundError);
    await expect(h.admin.rotateKey(user.id)).rejects.toBeInstanceOf(RecordNotFoundError);
    await expect(h.admin.revokeKey(user.id)).rejects.toBeInstanceOf(RecordNotFoundError);
    await expect(h.admin.generateKey(user.id)).resolves.toMatchObject({ userId: user.id });
  });

  it('shows a masked key and its creation time, never the key', async () => {
    const user = await newUser();
    const issued = await h.admin.generateKey(user.id);
    const shown = await h.admin.showKey(user.id);
    expect(shown).toEqual({ userId: user.id, masked: `tme_…${issued.key.slice(-4)}`, createdAt: issued.createdAt, policy: {}, test: false });
    expect(JSON.stringify(shown)).not.toContain(issued.key.slice(4, -4));
  });

  it('reports an unknown user for key commands', async () => {
    await expect(h.admin.generateKey('7c9e6679-7425-40de-944b-e07fc1f90ae7')).rejects.toBeInstanceOf(RecordNotFoundError);
    await expect(h.admin.showKey('bad-id')).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});

describe('DynamoDbKeyStore.findUserByEmail (the settings API\'s sign-in match)', () => {
  const keys = () => new DynamoDbKeyStore(createDynamoDbClient(h.config), h.config.tableName);

  it('matches an address ASCII-case-insensitively', async () => {
    const kate = await h.admin.createUser({ email: `kate.${Math.random().toString(36).slice(2)}@example.net` });
    expect((await keys().findUserByEmail(kate.email.toUpperCase()))?.id).toBe(kate.id);
  });

  it('folds no Unicode into ASCII: a Kelvin sign is not a k, and a non-ASCII local part matches nobody (security audit round 2, finding 4)', async () => {
    const local = `kate${Math.random().toString(36).slice(2)}`;
    await h.admin.createUser({ email: `${local}@example.net` });
    expect(await keys().findUserByEmail(`\u212A${local.slice(1)}@example.net`)).toBeUndefined();
    expect(await keys().findUserByEmail(`\u212A${local.slice(1).toUpperCase()}@EXAMPLE.NET`)).toBeUndefined();
  });
});

describe('OrganizationTrackingStore (org tracking)', () => {
  /**
   * A client whose first `reads` GetItems each wait until all of them have been asked: the two
   * operators below both read the default before either writes, the interleaving that loses an
   * update to an unconditioned write.
   */
  function readingTogether(reads: number): DynamoDBDocumentClient {
    const client = createDynamoDbClient(h.config);
    let arrived = 0;
    let release!: () => void;
    const together = new Promise<void>((resolve) => (release = resolve));
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'GetItemCommand' && arrived < reads) {
          if (++arrived === reads) release();
          await together;
        }
        return next(args);
      },
      { step: 'initialize', name: 'readTogether' },
    );
    return client;
  }

  it('keeps both of two changes made at the same moment: opens by one operator, clicks by another', async () => {
    const org = await h.admin.createOrganization({ name: 'Tracked' });
    const client = readingTogether(2);
    const [first, second] = [new OrganizationTrackingStore(client, h.config.tableName), new OrganizationTrackingStore(client, h.config.tableName)];
    await Promise.all([first.set(org.id, { opens: true }), second.set(org.id, { clicks: true })]);
    expect(await first.get(org.id)).toEqual({ opens: true, clicks: true });

    // Once set, the same holds for a change of each switch against a stored default.
    const again = readingTogether(2);
    await Promise.all([new OrganizationTrackingStore(again, h.config.tableName).set(org.id, { opens: false }), new OrganizationTrackingStore(again, h.config.tableName).set(org.id, { clicks: false })]);
    expect(await first.get(org.id)).toEqual({ opens: false, clicks: false });
  });

  it('replaces a corrupt stored default (which reads as off) instead of refusing to change it', async () => {
    const org = await h.admin.createOrganization({ name: 'Corrupt' });
    const client = createDynamoDbClient(h.config);
    const store = new OrganizationTrackingStore(client, h.config.tableName);
    for (const corrupt of ['on', true, 0, null, { opens: 'yes', clicks: true, extra: 1 }]) {
      await client.send(new UpdateCommand({ TableName: h.config.tableName, Key: itemKey.organization(org.id), UpdateExpression: 'SET #t = :v', ExpressionAttributeNames: { '#t': 'tracking' }, ExpressionAttributeValues: { ':v': corrupt } }));
      const read = await store.get(org.id);
      expect({ corrupt, read }).toEqual({ corrupt, read: { opens: false, clicks: corrupt !== null && typeof corrupt === 'object' } });
      await expect(store.set(org.id, { opens: true })).resolves.toEqual({ opens: true, clicks: read.clicks });
      expect(await store.get(org.id)).toEqual({ opens: true, clicks: read.clicks });
    }
  });

  it('says an Organization deleted between its read and its write does not exist', async () => {
    const org = await h.admin.createOrganization({ name: 'Deleted' });
    const client = createDynamoDbClient(h.config);
    const other = createDynamoDbClient(h.config);
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'UpdateItemCommand') await other.send(new DeleteCommand({ TableName: h.config.tableName, Key: itemKey.organization(org.id) }));
        return next(args);
      },
      { step: 'initialize', name: 'deleteBeforeWrite' },
    );
    await expect(new OrganizationTrackingStore(client, h.config.tableName).set(org.id, { clicks: true })).rejects.toBeInstanceOf(RecordNotFoundError);
  });

  it('refuses an Organization that does not exist, whether setting or reading', async () => {
    const store = new OrganizationTrackingStore(createDynamoDbClient(h.config), h.config.tableName);
    await expect(store.set('7c9e6679-7425-40de-944b-e07fc1f90ae7', { opens: true })).rejects.toBeInstanceOf(RecordNotFoundError);
    await expect(store.get('7c9e6679-7425-40de-944b-e07fc1f90ae7')).rejects.toBeInstanceOf(RecordNotFoundError);
  });
});
