/**
 * The auth path's DynamoDB round trips, counted on the wire: a middleware at the innermost step
 * of the production DynamoDB client (`createDynamoDbClient`) records every HTTP request the SDK
 * would send, and answers it from an in-memory table. The stores under test are the real ones.
 */
import { beforeEach, describe, expect, it } from '@jest/globals';
import { authenticate, authoriseOrganization } from '../../functions/send/authorisation';
import { useHour } from '../../functions/shared/auth/caller';
import { generateApiKey, hashApiKey } from '../../functions/shared/domain/api-keys';
import { createDynamoDbClient } from '../../functions/shared/runtime/clients';
import { CachedAccessStore } from '../../functions/shared/store/cached-access-store';
import { DynamoDbAccessStore } from '../../functions/shared/store/dynamodb-access-store';
import { itemKey } from '../../functions/shared/store/table';
import { HOUR_MS, clearOfTurn } from '../support/clock';

const TABLE = 'round-trips';
const ORG = '5f0c7c2e-8d1c-4a55-9a8e-0c3f5e2b9a10';
const OTHER_ORG = '0b6f9a52-3f0e-4a8e-9d1b-5c7e2a4d8f10';

type AttributeValue = { S: string } | { SS: string[] } | { M: Record<string, { BOOL: boolean }> };
type WireItem = Record<string, AttributeValue>;

interface WireRequest {
  readonly operation: string;
  /** For BatchGetItem: the partition keys asked for. */
  readonly keys: readonly string[];
}

/**
 * The production client, with every request it sends recorded and answered here. `unprocessed`
 * lists partition keys the fake leaves unread once, as DynamoDB may under load.
 */
function wireCountedStore(items: readonly WireItem[], options: { unprocessed?: readonly string[] } = {}) {
  const client = createDynamoDbClient({ region: 'us-east-1', dynamodbEndpoint: 'http://127.0.0.1:9' });
  const requests: WireRequest[] = [];
  const leaveUnread = new Set(options.unprocessed);
  client.middlewareStack.add(
    () => async (args) => {
      const request = args.request as { headers: Record<string, string>; body: string | Uint8Array };
      const operation = String(request.headers['x-amz-target']).split('.')[1] ?? 'unknown';
      const text = typeof request.body === 'string' ? request.body : new TextDecoder().decode(request.body);
      const body = JSON.parse(text) as { RequestItems: Record<string, { Keys: { pk: { S: string } }[]; ProjectionExpression?: string; ExpressionAttributeNames?: Record<string, string> }> };
      const asked = body.RequestItems?.[TABLE];
      const keys = (asked?.Keys ?? []).map((key) => key.pk.S);
      // Only the attributes the projection names come back, as from DynamoDB.
      const projected = asked?.ProjectionExpression?.split(',').map((name) => asked.ExpressionAttributeNames?.[name.trim()] ?? name.trim());
      const project = (item: WireItem): WireItem => (projected ? Object.fromEntries(Object.entries(item).filter(([name]) => projected.includes(name))) : item);
      requests.push({ operation, keys });
      const unread = keys.filter((pk) => leaveUnread.delete(pk));
      const found = items.filter((item) => 'S' in item.pk! && keys.includes(item.pk.S) && !unread.includes(item.pk.S));
      const answer = {
        Responses: { [TABLE]: found.map(project) },
        UnprocessedKeys: unread.length > 0 ? { [TABLE]: { Keys: unread.map((pk) => ({ pk: { S: pk }, sk: { S: pk.split('#')[0] } })) } } : {},
      };
      return {
        response: { statusCode: 200, headers: { 'content-type': 'application/x-amz-json-1.0' }, body: new TextEncoder().encode(JSON.stringify(answer)) },
        output: undefined as never,
      };
    },
    { step: 'deserialize', priority: 'low', name: 'wireCounter' },
  );
  return { store: new DynamoDbAccessStore(client, TABLE), requests };
}

/** A tenant whose key was last used `lastUsedAt` (by default this hour, so no use is recorded). */
function tenantItems(apiKey: string, organizationId = ORG, lastUsedAt: string | undefined = useHour(Date.now())): WireItem[] {
  const key = itemKey.apiKey(hashApiKey(apiKey));
  const user = itemKey.user('u1');
  const org = itemKey.organization(organizationId);
  return [
    { pk: { S: key.pk }, sk: { S: key.sk }, userId: { S: 'u1' }, ...(lastUsedAt && { lastUsedAt: { S: lastUsedAt } }) },
    { pk: { S: user.pk }, sk: { S: user.sk }, keyHash: { S: hashApiKey(apiKey) } },
    { pk: { S: org.pk }, sk: { S: org.sk }, organizationId: { S: organizationId }, members: { SS: ['u1'] }, senders: { SS: ['example.com'] } },
  ];
}

describe('auth path DynamoDB round trips', () => {
  // The items say the key was used this hour; the hour must not turn before the request reads them.
  beforeEach(() => clearOfTurn(HOUR_MS, 5_000));

  const keyPk = (apiKey: string) => itemKey.apiKey(hashApiKey(apiKey)).pk;

  const userPk = itemKey.user('u1').pk;

  it('reads the key, then whether its user still holds it, then the Organization of a known key, on a cache miss, and makes no request on a hit', async () => {
    const apiKey = generateApiKey();
    const { store, requests } = wireCountedStore(tenantItems(apiKey));
    const cached = new CachedAccessStore(store, { ttlSeconds: 30 });

    const caller = await authenticate(apiKey, cached);
    const organization = await authoriseOrganization(caller, ORG, cached);
    expect(requests).toEqual([
      { operation: 'BatchGetItem', keys: [keyPk(apiKey)] },
      { operation: 'BatchGetItem', keys: [userPk] },
      { operation: 'BatchGetItem', keys: [itemKey.organization(ORG).pk] },
    ]);
    expect(caller.userId).toBe('u1');
    expect([...organization.senders]).toEqual(['example.com']);

    requests.length = 0;
    for (let i = 0; i < 5; i++) {
      const again = await authenticate(apiKey, cached);
      expect((await authoriseOrganization(again, ORG, cached)).organizationId).toBe(ORG);
    }
    expect(requests).toEqual([]);
  });

  it('brings the Organization\'s default tracking with the Organization, in the same three requests', async () => {
    const apiKey = generateApiKey();
    const items = tenantItems(apiKey);
    const org = { ...items[2]!, tracking: { M: { opens: { BOOL: true }, clicks: { BOOL: false } } } };
    const { store, requests } = wireCountedStore([items[0]!, items[1]!, org]);
    const organization = await authoriseOrganization(await authenticate(apiKey, store), ORG, store);
    expect(organization.tracking).toEqual({ opens: true, clicks: false });
    expect(requests.map((r) => r.keys)).toEqual([[keyPk(apiKey)], [userPk], [itemKey.organization(ORG).pk]]);
  });

  it('makes three requests per authorised request when the cache is off', async () => {
    const apiKey = generateApiKey();
    const { store, requests } = wireCountedStore(tenantItems(apiKey));
    for (let i = 0; i < 3; i++) await authoriseOrganization(await authenticate(apiKey, store), ORG, store);
    expect(requests.map((r) => r.keys)).toEqual(Array.from({ length: 3 }, () => [[keyPk(apiKey)], [userPk], [itemKey.organization(ORG).pk]]).flat());
  });

  it('asks only for the Organization when the key is cached but the Organization is not', async () => {
    const apiKey = generateApiKey();
    const { store, requests } = wireCountedStore([...tenantItems(apiKey), ...tenantItems(apiKey, OTHER_ORG).slice(2)]);
    const cached = new CachedAccessStore(store, { ttlSeconds: 30 });
    await authoriseOrganization(await authenticate(apiKey, cached), ORG, cached);
    requests.length = 0;
    const other = await authoriseOrganization(await authenticate(apiKey, cached), OTHER_ORG, cached);
    expect(requests).toEqual([{ operation: 'BatchGetItem', keys: [itemKey.organization(OTHER_ORG).pk] }]);
    expect(other.organizationId).toBe(OTHER_ORG);
  });

  it('makes a 403 cost one Organization read, whether the Organization was cached or never seen (security audit round 2, finding 7)', async () => {
    const member = generateApiKey();
    const outsider = generateApiKey();
    const outsiderItems = tenantItems(outsider, OTHER_ORG).map((item) => (item.userId ? { ...item, userId: { S: 'u2' } } : item));
    const outsiderUser = itemKey.user('u2');
    const { store, requests } = wireCountedStore([
      ...tenantItems(member),
      outsiderItems[0]!,
      { pk: { S: outsiderUser.pk }, sk: { S: outsiderUser.sk }, keyHash: { S: hashApiKey(outsider) } },
    ]);
    const cached = new CachedAccessStore(store, { ttlSeconds: 30 });
    // The member's request puts ORG in this instance's cache; the outsider's key is cached too.
    await authoriseOrganization(await authenticate(member, cached), ORG, cached);
    const caller = await authenticate(outsider, cached);
    const unknown = '7d3a9c1e-2b4f-4c6d-8e0a-1f2b3c4d5e6f';
    for (const organizationId of [ORG, unknown, ORG, unknown]) {
      requests.length = 0;
      await expect(authoriseOrganization(caller, organizationId, cached)).rejects.toMatchObject({ status: 403 });
      expect([organizationId, requests]).toEqual([organizationId, [{ operation: 'BatchGetItem', keys: [itemKey.organization(organizationId).pk] }]]);
    }
    // A success from the cache still costs nothing.
    requests.length = 0;
    await authoriseOrganization(await authenticate(member, cached), ORG, cached);
    expect(requests).toEqual([]);
  });

  it('reads an unknown key once, answers it from the negative entry after that, and never reads an Organization for it', async () => {
    const { store, requests } = wireCountedStore([]);
    const cached = new CachedAccessStore(store, { ttlSeconds: 30 });
    const stranger = generateApiKey();
    for (let i = 0; i < 10; i++) await expect(authenticate(stranger, cached)).rejects.toMatchObject({ status: 401 });
    expect(requests).toEqual([{ operation: 'BatchGetItem', keys: [keyPk(stranger)] }]);
  });

  it('asks again, for the unread key alone, when DynamoDB leaves part of the batch unprocessed', async () => {
    const apiKey = generateApiKey();
    const { store, requests } = wireCountedStore(tenantItems(apiKey), { unprocessed: [keyPk(apiKey)] });
    const caller = await authenticate(apiKey, new CachedAccessStore(store, { ttlSeconds: 30 }));
    expect(requests.map((r) => r.keys)).toEqual([[keyPk(apiKey)], [keyPk(apiKey)], [userPk]]);
    expect(caller.userId).toBe('u1');
  });

  it('records the first use of a key in an hour with one write, which the cached key remembers, and none in an hour already recorded', async () => {
    const apiKey = generateApiKey();
    const lastHour = useHour(Date.now() - 3_600_000);
    const { store, requests } = wireCountedStore(tenantItems(apiKey, ORG, lastHour));
    const cached = new CachedAccessStore(store, { ttlSeconds: 30 });
    for (let i = 0; i < 5; i++) await authenticate(apiKey, cached);
    expect(requests.map((r) => r.operation)).toEqual(['BatchGetItem', 'BatchGetItem', 'UpdateItem']);

    const fresh = wireCountedStore(tenantItems(apiKey));
    for (let i = 0; i < 5; i++) await authenticate(apiKey, new CachedAccessStore(fresh.store, { ttlSeconds: 30 }));
    expect(fresh.requests.map((r) => r.operation)).not.toContain('UpdateItem');
  });
});
