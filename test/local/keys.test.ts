/**
 * Scoped, sender-limited and expiring keys (docs/keys.md) through the local stack: made with
 * the admin CLI as an operator would, used over real HTTP, every answer checked against
 * openapi.json, and what reached the SES emulator checked too.
 */
import { DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { useHour } from '../../functions/shared/auth/caller';
import { HOUR_MS, clearOfTurn } from '../support/clock';
import { itemKey } from '../../functions/shared/store/table';
import type { TestStack, Tenant } from './helpers';
import { admin, adminEnv, adminJson, clearEmails, expectProblem, messageBody, provisionTenant, send, sentEmails, startTestStack } from './helpers';

let stack: TestStack;
let env: Record<string, string>;
let tenant: Tenant;

beforeAll(async () => {
  stack = await startTestStack();
  env = adminEnv(stack);
  tenant = await provisionTenant(env, ['example.com', 'billing@acme.test']);
});
afterAll(async () => stack?.stop());
beforeEach(async () => clearEmails(stack.sesUrl));

const rotate = async (...options: string[]) => (await adminJson(env, 'key', 'rotate', '--user', tenant.userId, ...options)).key as string;
const status = (apiKey: string) =>
  fetch(stack.statusUrl, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ OrganizationId: tenant.organizationId, MessageIds: ['0100-unknown'] }) });

describe('scopes', () => {
  it('refuses a call outside the key\'s scopes with 403 insufficient-scope and the RFC 6750 challenge, and sends nothing', async () => {
    const key = await rotate('--scopes', 'status');
    const refused = await send(stack, key, messageBody(tenant.organizationId));
    expect(refused.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="send"');
    const problem = await expectProblem(refused, 403);
    expect(problem.type).toMatch(/\/insufficient-scope$/);
    expect(problem.detail).toContain('"send"');
    expect(await sentEmails(stack.sesUrl)).toEqual([]);
    expect((await status(key)).status).toBe(200);
  });

  it('lets a key with the scope make the call, and one with no scopes make every call', async () => {
    const sendOnly = await rotate('--scopes', 'send');
    expect((await send(stack, sendOnly, messageBody(tenant.organizationId))).status).toBe(200);
    await expectProblem(await status(sendOnly), 403);
    const everything = await rotate();
    expect((await send(stack, everything, messageBody(tenant.organizationId))).status).toBe(200);
    expect((await status(everything)).status).toBe(200);
    expect(await sentEmails(stack.sesUrl)).toHaveLength(2);
  });
});

describe('senders', () => {
  it('refuses a From outside the key\'s senders with 403 sender-forbidden naming the message, though the Organization allows it', async () => {
    const key = await rotate('--senders', 'billing@acme.test');
    const refused = await expectProblem(await send(stack, key, messageBody(tenant.organizationId, { From: 'noreply@example.com' })), 403);
    expect(refused.type).toMatch(/\/sender-forbidden$/);
    expect(refused.errors).toEqual([{ pointer: '/Messages/0/From', detail: 'noreply@example.com is not among the senders this API key may use' }]);
    expect(await sentEmails(stack.sesUrl)).toEqual([]);
    expect((await send(stack, key, messageBody(tenant.organizationId, { From: 'billing@acme.test' }))).status).toBe(200);
  });
});

describe('expiry', () => {
  it('answers 401 invalid-token saying the key expired once its time has passed', async () => {
    const key = await rotate('--expires-in', '1h');
    expect((await send(stack, key, messageBody(tenant.organizationId))).status).toBe(200);
    // An hour cannot pass in a test: the stored expiry is moved into the past, as time would.
    const client = new DynamoDBClient({ region: 'us-east-1', endpoint: stack.dynamodbEndpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const expiredAt = new Date(Date.now() - 1_000).toISOString();
    const { pk, sk } = itemKey.user(tenant.userId);
    await client.send(new UpdateItemCommand({ TableName: stack.tableName, Key: { pk: { S: pk }, sk: { S: sk } }, UpdateExpression: 'SET keyExpiresAt = :at', ExpressionAttributeValues: { ':at': { S: expiredAt } } }));
    client.destroy();
    await clearEmails(stack.sesUrl);
    const refused = await send(stack, key, messageBody(tenant.organizationId));
    expect(refused.headers.get('www-authenticate')).toBe('Bearer error="invalid_token", error_description="The API key expired"');
    const problem = await expectProblem(refused, 401);
    expect(problem.type).toMatch(/\/invalid-token$/);
    expect(problem.detail).toContain(`expired at ${expiredAt}`);
    expect(JSON.stringify(problem)).not.toContain(key);
    expect(await sentEmails(stack.sesUrl)).toEqual([]);
  });
});

describe('key show', () => {
  it('prints scopes, senders, expiry and the hour of last use, in words and as JSON', async () => {
    await clearOfTurn(HOUR_MS, 15_000);
    const key = await rotate('--scopes', 'send,status', '--senders', 'example.com', '--expires-in', '90d');
    const before = await adminJson(env, 'key', 'show', '--user', tenant.userId);
    expect(before).toMatchObject({ scopes: ['send', 'status'], senders: ['example.com'], lastUsedAt: null, test: false });
    expect(Date.parse(before.expiresAt) - Date.now()).toBeGreaterThan(89 * 86_400_000);
    expect((await send(stack, key, messageBody(tenant.organizationId))).status).toBe(200);
    const after = await adminJson(env, 'key', 'show', '--user', tenant.userId);
    expect(after.lastUsedAt).toBe(useHour(Date.now()));
    const human = await admin(env, 'key', 'show', '--user', tenant.userId);
    expect(human.stdout).toContain(`scopes send,status; senders example.com; expires ${before.expiresAt}; last used ${after.lastUsedAt}`);
  });
});

describe('bad input changes nothing', () => {
  it.each([
    ['an unknown scope', ['--scopes', 'send,admin'], 'unknown scope "admin"'],
    ['an empty sender list', ['--senders', ''], 'no empty entry'],
    ['a malformed sender list', ['--senders', 'example.com,,acme.test'], 'no empty entry'],
    ['a sender that is not a domain', ['--senders', 'not a domain'], 'is not a domain name'],
    ['a sender outside the Organization\'s identities', ['--senders', 'other.example'], 'other.example is not a sender identity'],
    ['a zero expiry', ['--expires-in', '0d'], 'not a positive duration'],
    ['a negative expiry', ['--expires-in', '-3d'], 'not a positive duration'],
    ['--test with the live-only --keep-schedules', ['--test', '--keep-schedules'], '--keep-schedules cannot go with --test'],
    ['--keep-schedules on a key without the send scope, which would send them', ['--scopes', 'status', '--keep-schedules'], '--keep-schedules cannot go with --scopes status: the new key would send'],
  ])('refuses %s with exit 1 invalid_argument, on generate and rotate alike', async (_, options, message) => {
    const key = await rotate();
    const shown = await adminJson(env, 'key', 'show', '--user', tenant.userId);
    // generate has no --keep-schedules (a new key has no schedules to keep): commander refuses it as usage.
    for (const command of options.includes('--keep-schedules') ? ['rotate'] : ['rotate', 'generate']) {
      const result = await admin(env, 'key', command, '--user', tenant.userId, ...options, '--json');
      expect(result.code).toBe(1);
      expect(JSON.parse(result.stderr)).toEqual({ error: { code: 'invalid_argument', message: expect.stringContaining(message) } });
    }
    expect(await adminJson(env, 'key', 'show', '--user', tenant.userId)).toEqual(shown);
    expect((await send(stack, key, messageBody(tenant.organizationId))).status).toBe(200);
  });
});

describe('service users', () => {
  it('are made with a name in one Organization, listed beside people, hold a key of their own, and outlive a person leaving', async () => {
    await clearOfTurn(HOUR_MS, 15_000);
    const person = await adminJson(env, 'user', 'create', '--email', `leaver.${Date.now()}@users.example.net`);
    await adminJson(env, 'member', 'add', '--org', tenant.organizationId, '--user', person.id);
    const { id } = await adminJson(env, 'user', 'create', '--service', '--name', 'Billing sync', '--org', tenant.organizationId);
    const listed = await adminJson(env, 'user', 'list', '--org', tenant.organizationId);
    expect(listed.users).toEqual(expect.arrayContaining([{ id, email: null, service: true, name: 'Billing sync' }, { id: person.id, email: expect.stringMatching(/^leaver\./) }]));
    expect((await admin(env, 'user', 'list', '--org', tenant.organizationId)).stdout).toContain(`${id}  "Billing sync" (service user)`);
    expect(await adminJson(env, 'user', 'show', '--user', id)).toMatchObject({ id, email: null, service: true, name: 'Billing sync', organizations: [tenant.organizationId] });

    const { key } = await adminJson(env, 'key', 'generate', '--user', id, '--scopes', 'send');
    await adminJson(env, 'member', 'remove', '--org', tenant.organizationId, '--user', person.id);
    await adminJson(env, 'user', 'delete', '--user', person.id);
    expect((await send(stack, key, messageBody(tenant.organizationId))).status).toBe(200);
    expect(await adminJson(env, 'key', 'show', '--user', id)).toMatchObject({ scopes: ['send'], lastUsedAt: useHour(Date.now()) });
  });

  it('belong to one Organization only', async () => {
    const { id } = await adminJson(env, 'user', 'create', '--service', '--name', 'Reports', '--org', tenant.organizationId);
    const { id: other } = await adminJson(env, 'org', 'create', '--name', 'Other');
    const refuse = async () => {
      const refused = await admin(env, 'member', 'add', '--org', other, '--user', id, '--json');
      expect([refused.code, JSON.parse(refused.stderr).error.message]).toEqual([4, expect.stringContaining('a service user belongs to one Organization only')]);
    };
    await refuse();
    // Also once taken out of its own: it may go back there, and nowhere else.
    await adminJson(env, 'member', 'remove', '--org', tenant.organizationId, '--user', id);
    await refuse();
    expect((await adminJson(env, 'user', 'show', '--user', id)).organizations).toEqual([]);
    await adminJson(env, 'member', 'add', '--org', tenant.organizationId, '--user', id);
    expect((await adminJson(env, 'user', 'show', '--user', id)).organizations).toEqual([tenant.organizationId]);
  });

  it('made before their Organization was recorded, belong to the first one they join once outside all', async () => {
    const { id } = await adminJson(env, 'user', 'create', '--service', '--name', 'Legacy', '--org', tenant.organizationId);
    // As such a user was stored: no serviceOrganization.
    const client = new DynamoDBClient({ region: 'us-east-1', endpoint: stack.dynamodbEndpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const { pk, sk } = itemKey.user(id);
    await client.send(new UpdateItemCommand({ TableName: stack.tableName, Key: { pk: { S: pk }, sk: { S: sk } }, UpdateExpression: 'REMOVE serviceOrganization' }));
    client.destroy();
    const [{ id: second }, { id: third }] = [await adminJson(env, 'org', 'create', '--name', 'Second'), await adminJson(env, 'org', 'create', '--name', 'Third')];

    // Still in its Organization: that one is its own.
    expect((await admin(env, 'member', 'add', '--org', second, '--user', id)).code).toBe(4);
    await adminJson(env, 'member', 'remove', '--org', tenant.organizationId, '--user', id);
    // Outside all: the first it joins becomes its own, and it joins no other after.
    await adminJson(env, 'member', 'add', '--org', second, '--user', id);
    await adminJson(env, 'member', 'remove', '--org', second, '--user', id);
    const refused = await admin(env, 'member', 'add', '--org', third, '--user', id, '--json');
    expect([refused.code, JSON.parse(refused.stderr).error.message]).toEqual([4, expect.stringContaining(`service user of Organization ${second}`)]);
    await adminJson(env, 'member', 'add', '--org', second, '--user', id);
  });

  it.each([
    ['without --org', ['--service', '--name', 'X'], 1, '--service needs --name N and --org O'],
    ['without --name', ['--service', '--org', '5f0c7c2e-8d1c-4a55-9a8e-0c3f5e2b9a10'], 1, '--service needs --name N and --org O'],
    ['with an e-mail', ['--service', '--name', 'X', '--org', '5f0c7c2e-8d1c-4a55-9a8e-0c3f5e2b9a10', '--email', 'x@example.net'], 1, 'has no e-mail'],
    ['with an empty name', ['--service', '--name', ' ', '--org', '5f0c7c2e-8d1c-4a55-9a8e-0c3f5e2b9a10'], 1, '--name must be 1 to 128 characters'],
    ['for an unknown Organization', ['--service', '--name', 'X', '--org', '5f0c7c2e-8d1c-4a55-9a8e-0c3f5e2b9a10'], 3, 'no Organization'],
  ])('are refused %s, and nothing is made', async (_, options, code, message) => {
    const before = (await adminJson(env, 'user', 'list')).users.length;
    const refused = await admin(env, 'user', 'create', ...options, '--json');
    expect([refused.code, JSON.parse(refused.stderr).error.message]).toEqual([code, expect.stringContaining(message)]);
    expect((await adminJson(env, 'user', 'list')).users).toHaveLength(before);
  });
});
