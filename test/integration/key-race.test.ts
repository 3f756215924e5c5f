/**
 * Key changes under races (security audit round 2, finding 1), against dynalite with the real
 * stores: two rotates close together, one of whose writes is held back until the other has
 * finished, as a slow network or a paused Lambda would do. Whatever lands last, only the key the
 * user holds authenticates, and after `revoke` no key of that user does.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { generateApiKey, hashApiKey } from '../../functions/shared/domain/api-keys';
import { authenticate } from '../../functions/shared/auth/caller';
import { createDynamoDbClient } from '../../functions/shared/runtime/clients';
import { DynamoDbAccessStore } from '../../functions/shared/store/dynamodb-access-store';
import { DynamoDbKeyStore } from '../../functions/shared/store/dynamodb-key-store';
import { itemKey } from '../../functions/shared/store/table';
import { DynamoDbAdminStore } from '../../infra/admin/admin-store';
import type { RunningService } from '../../infra/local/emulators';
import { ensureTable, startDynamoDb } from '../../infra/local/emulators';

const TABLE = `key-race-${randomUUID()}`;
let dynamo: RunningService;
let documents: DynamoDBDocumentClient;
let admin: DynamoDbAdminStore;
let access: DynamoDbAccessStore;

beforeAll(async () => {
  dynamo = await startDynamoDb();
  await ensureTable(new DynamoDBClient({ region: 'us-east-1', endpoint: dynamo.endpoint }), TABLE);
  documents = createDynamoDbClient({ region: 'us-east-1', dynamodbEndpoint: dynamo.endpoint });
  admin = new DynamoDbAdminStore(documents, TABLE);
  access = new DynamoDbAccessStore(documents, TABLE);
});

afterAll(async () => {
  documents.destroy();
  await dynamo.close();
});

type Send = DynamoDBDocumentClient['send'];

/** Passes every command on; records the hash of every `KEY#` item written; the first such write waits for `release()` when `hold` is set. */
function wrappedClient(written: Set<string>, hold: boolean): { client: DynamoDBDocumentClient; held: Promise<void>; release: () => void } {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let markHeld!: () => void;
  const held = new Promise<void>((resolve) => (markHeld = resolve));
  let holding = hold;
  const send = (async (command: { input: Record<string, unknown> }) => {
    const pk = String((command.input.Item as Record<string, unknown> | undefined)?.pk ?? '');
    if (command instanceof PutCommand && pk.startsWith('KEY#')) {
      written.add(pk.slice(4));
      if (holding) {
        holding = false;
        markHeld();
        await gate;
      }
    }
    return (documents.send as (c: unknown) => Promise<unknown>)(command);
  }) as unknown as Send;
  return { client: { send } as DynamoDBDocumentClient, held, release };
}

async function authenticates(keyHash: string): Promise<boolean> {
  return (await access.lookup(keyHash, undefined)).key !== undefined;
}

describe('key changes racing each other', () => {
  it('leaves no key item that authenticates once revoked, when a rotate\'s write lands after a later rotate', async () => {
    const user = await admin.createUser({ email: `${randomUUID()}@race.example.net` });
    await admin.generateKey(user.id);
    const written = new Set<string>();
    const slow = wrappedClient(written, true);
    const slowStore = new DynamoDbKeyStore(slow.client, TABLE);
    const fastStore = new DynamoDbKeyStore(wrappedClient(written, false).client, TABLE);

    // The first rotate's KEY# write is held until the second rotate has finished; it may then
    // lose (a conflict) or win, but it must not leave a second working key.
    const first = slowStore.rotate(user.id).catch((error: unknown) => error);
    await slow.held;
    const second = await fastStore.rotate(user.id);
    slow.release();
    await first;

    const holder = await admin.getUser(user.id);
    expect(written.size).toBeGreaterThanOrEqual(2);
    for (const hash of written) expect(await authenticates(hash)).toBe(hash === holder.keyHash);
    expect(holder.keyHash).toBe(hashApiKey(second.key));

    await admin.revokeKey(user.id);
    expect((await admin.getUser(user.id)).keyHash).toBeUndefined();
    for (const hash of written) expect(await authenticates(hash)).toBe(false);
  });

  it('refuses a key item its user no longer points to, such as one left by an interrupted change', async () => {
    const user = await admin.createUser({ email: `${randomUUID()}@race.example.net` });
    const held = await admin.generateKey(user.id);
    const orphanKey = generateApiKey();
    await documents.send(new PutCommand({ TableName: TABLE, Item: { ...itemKey.apiKey(hashApiKey(orphanKey)), userId: user.id, createdAt: new Date().toISOString() } }));

    await expect(authenticate(orphanKey, access)).rejects.toMatchObject({ status: 401 });
    await expect(authenticate(held.key, access)).resolves.toEqual({ userId: user.id, keyHash: hashApiKey(held.key), policy: {}, test: false });
  });

  it('sweeps key items their users do not hold, and keeps every held one and any young enough to be in flight', async () => {
    const user = await admin.createUser({ email: `${randomUUID()}@race.example.net` });
    const held = await admin.generateKey(user.id);
    const gone = await admin.createUser({ email: `${randomUUID()}@race.example.net` });
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    const [stale, ofOther, young] = [generateApiKey(), generateApiKey(), generateApiKey()].map(hashApiKey);
    for (const [hash, userId, createdAt] of [[stale!, user.id, hourAgo], [ofOther!, gone.id, hourAgo], [young!, user.id, new Date().toISOString()]] as const) {
      await documents.send(new PutCommand({ TableName: TABLE, Item: { ...itemKey.apiKey(hash), userId, createdAt } }));
    }

    const swept = await new DynamoDbKeyStore(documents, TABLE).sweepOrphans();
    expect(swept).toBeGreaterThanOrEqual(2);
    const { Items = [] } = await documents.send(new ScanCommand({ TableName: TABLE, ProjectionExpression: 'pk' }));
    const keyItems = Items.map((item) => String(item.pk)).filter((pk) => pk.startsWith('KEY#'));
    expect(keyItems).toContain(itemKey.apiKey(hashApiKey(held.key)).pk);
    expect(keyItems).toContain(itemKey.apiKey(young!).pk);
    for (const hash of [stale!, ofOther!]) expect(keyItems).not.toContain(itemKey.apiKey(hash).pk);
  });
});
