/**
 * The settings API (`/v1.2/me…`) behind the local gateway's JWT authorizer, with real tokens
 * signed by the embedded OpenID provider, against dynalite and the SES emulator: what a signed-in
 * user can see and do, and every way a token is refused. Every answer is checked against
 * openapi.json.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { decodeJwt, exportJWK, generateKeyPair } from 'jose';
import type { Harness } from '../support/harness';
import { message, sendBody, startHarness } from '../support/harness';
import { validateFetchesTo } from '../support/openapi';
import { signIn } from '../support/oidc';
import { createApiServer } from '../../infra/local/gateway/server';
import type { ApiServer, LambdaHandler } from '../../infra/local/gateway/server';
import { closeServer, listening } from '../../infra/local/emulators';
import type { LocalOidcProvider } from '../../infra/local/oidc/provider';
import { startLocalOidcProvider } from '../../infra/local/oidc/provider';
import { settingsRoutes } from '../../infra/local/sign-in';
import { createHandler } from '../../functions/send/handler';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { EventsDependencies } from '../../functions/events/record-event';
import { recordEvent } from '../../functions/events/record-event';
import { createDynamoDbClient } from '../../functions/shared/runtime/clients';
import { DynamoDbReputationStore } from '../../functions/shared/store/dynamodb-reputation-store';
import { createLogger, createMetrics } from '../../functions/shared/runtime/observability';
import { DynamoDbActivityStore, FILTERED_READ_ITEMS } from '../../functions/shared/store/dynamodb-activity-store';
import { DynamoDbEngagementStore } from '../../functions/shared/store/dynamodb-engagement-store';
import { DynamoDbDeliveryStore } from '../../functions/shared/store/dynamodb-delivery-store';
import { DynamoDbSuppressionStore } from '../../functions/shared/store/dynamodb-suppression-store';
import { itemKey } from '../../functions/shared/store/table';
import { useHour } from '../../functions/shared/auth/caller';
import { HOUR_MS, clearOfTurn } from '../support/clock';
import { RECORDS, eventBridge, mail, variant } from '../support/ses-fixtures';

let harness: Harness;
let api: ApiServer;
let base: string;
let provider: LocalOidcProvider;
let signingKey: Record<string, unknown>;
const others: LocalOidcProvider[] = [];
let stopChecking: () => void;
let documents: DynamoDBDocumentClient;
/** The local sealing key, given, so no test writes one to disk. */
const SEALING_ENV = { LOCAL_SEALING_KEY: randomBytes(32).toString('base64') };

async function newKey(): Promise<Record<string, unknown>> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: randomBytes(6).toString('hex') };
}

beforeAll(async () => {
  harness = await startHarness();
  documents = createDynamoDbClient(harness.config);
  api = createApiServer({ problemTypeBase: harness.config.problemTypeBase });
  const port = await listening(api.server, 0);
  base = `http://127.0.0.1:${port}`;
  signingKey = await newKey();
  provider = await startLocalOidcProvider({ port: 0, redirectUris: [`${base}/settings`], signingKeys: [signingKey] });
  api.setHandler(createHandler(harness.deps) as unknown as LambdaHandler, settingsRoutes({ provider, store: harness.config, credentials: undefined, env: SEALING_ENV }));
  stopChecking = validateFetchesTo(base);
});

afterAll(async () => {
  stopChecking();
  await Promise.all([closeServer(api.server), provider.close(), ...others.map((other) => other.close())]);
  await harness.stop();
});

/** Another provider, to mint tokens that differ from the real ones in one respect. */
async function otherProvider(options: Partial<Parameters<typeof startLocalOidcProvider>[0]>): Promise<LocalOidcProvider> {
  const other = await startLocalOidcProvider({ port: 0, redirectUris: [`${base}/settings`], signingKeys: [signingKey], ...options });
  others.push(other);
  return other;
}

async function tokenFor(email: string, from: LocalOidcProvider = provider): Promise<string> {
  const { accessToken } = await signIn({ issuer: from.endpoint, clientId: from.clientId, redirectUri: `${base}/settings`, email });
  return accessToken;
}

function call(method: string, path: string, token: string | undefined): Promise<Response> {
  return fetch(`${base}${path}`, { method, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
}

async function user(options: { organizations?: string[] } = {}): Promise<{ email: string; id: string; organizations: { id: string; name: string }[] }> {
  const email = `${randomBytes(5).toString('hex')}@users.example.net`;
  const created = await harness.admin.createUser({ email });
  const organizations = [];
  for (const name of options.organizations ?? []) {
    const organization = await harness.admin.createOrganization({ name });
    await harness.admin.addMember(organization.id, created.id);
    await harness.admin.addSender(organization.id, { domain: 'example.com' });
    organizations.push({ id: organization.id, name });
  }
  return { email, id: created.id, organizations };
}

function send(apiKey: string, organizationId: string): Promise<Response> {
  return fetch(`${base}/v1.2/email/send`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(sendBody({ organizationId, userId: '', apiKey }, [message()])),
  });
}

describe('the settings API: scopes, senders and expiry of the user\'s own key', () => {
  const post = (path: string, token: string, body: unknown) =>
    fetch(`${base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('makes a limited key, shows its limits, and the key is held to them', async () => {
    await clearOfTurn(HOUR_MS, 15_000);
    const someone = await user({ organizations: ['Acme'] });
    const token = await tokenFor(someone.email);
    const generated = await post('/v1.2/me/api-key', token, { Scopes: ['status'], Senders: ['example.com'], ExpiresIn: '30d' });
    expect(generated.status).toBe(201);
    const { Key } = (await generated.json()) as { Key: string };
    const refused = await send(Key, someone.organizations[0]!.id);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="send"');
    const me = (await (await call('GET', '/v1.2/me', token)).json()) as { ApiKey: Record<string, unknown> };
    expect(me.ApiKey).toMatchObject({ Scopes: ['status'], Senders: ['example.com'], Test: false, LastUsedAt: useHour(Date.now()) });
    expect(Date.parse(String(me.ApiKey.ExpiresAt)) - Date.now()).toBeGreaterThan(29 * 86_400_000);

    const rotated = await post('/v1.2/me/api-key/rotate', token, {});
    expect(rotated.status).toBe(200);
    const after = (await (await call('GET', '/v1.2/me', token)).json()) as { ApiKey: Record<string, unknown> };
    expect(after.ApiKey).not.toHaveProperty('Scopes');
    expect(after.ApiKey).not.toHaveProperty('ExpiresAt');
    expect((await send(((await rotated.json()) as { Key: string }).Key, someone.organizations[0]!.id)).status).toBe(200);
  });

  it.each([
    ['an unknown scope', { Scopes: ['send', 'admin'] }, '/Scopes'],
    ['an empty sender list', { Senders: [] }, '/Senders'],
    ['a sender outside the user\'s Organizations', { Senders: ['other.example'] }, '/Senders'],
    ['a zero expiry', { ExpiresIn: '0d' }, '/ExpiresIn'],
    ['a negative expiry', { ExpiresIn: '-1d' }, '/ExpiresIn'],
    ['an unknown field', { Scope: ['send'] }, '/Scope'],
    ['test mode with the live-only KeepSchedules', { Test: true, KeepSchedules: true }, '/KeepSchedules'],
    ['KeepSchedules on a key without the send scope', { Scopes: ['status'], KeepSchedules: true }, '/KeepSchedules'],
  ])('refuses %s with 400 naming the field, and changes nothing', async (_, body, pointer) => {
    const someone = await user({ organizations: ['Acme'] });
    const token = await tokenFor(someone.email);
    const refused = await post('/v1.2/me/api-key', token, body);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { errors: { pointer: string }[] }).errors.map((error) => error.pointer)).toEqual([pointer]);
    expect(((await (await call('GET', '/v1.2/me', token)).json()) as { ApiKey: unknown }).ApiKey).toBeNull();
  });

  it('names the lists as JSON arrays, not as the CLI\'s comma-separated text', async () => {
    const token = await tokenFor((await user({ organizations: ['Acme'] })).email);
    const refused = await post('/v1.2/me/api-key', token, { Scopes: [], Senders: ['example.com', ''] });
    expect(((await refused.json()) as { errors: unknown[] }).errors).toEqual([
      { pointer: '/Scopes', detail: 'scopes must be a list of one or more of send, status, cancel, templates with no empty entry' },
      { pointer: '/Senders', detail: 'senders must be a list of one or more domains and addresses with no empty entry' },
    ]);
  });
});

describe('the settings API for a signed-in user', () => {
  it('shows the e-mail, the Organizations with names, ids and reputation, and no key', async () => {
    const someone = await user({ organizations: ['Zeta Corp', 'Acme'] });
    const zeta = someone.organizations.find(({ name }) => name === 'Zeta Corp')!;
    const pause = { at: '2026-11-23T10:00:00.000Z', reason: 'complaint rate 1 % (2 of 200 recipients in the last 7 days) is at or above 0.1 %' };
    await new DynamoDbReputationStore(createDynamoDbClient(harness.config), harness.config.tableName).pause(zeta.id, pause);
    const response = await call('GET', '/v1.2/me', await tokenFor(someone.email));
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const quiet = { Sends: 0, HardBounces: 0, Complaints: 0, BounceRate: 0, ComplaintRate: 0 };
    expect(await response.json()).toEqual({
      Email: someone.email,
      Organizations: [...someone.organizations]
        .sort((a, b) => a.name.localeCompare(b.name))
        .map(({ id, name }) => ({
          OrganizationId: id,
          Name: name,
          Limits: { Rate: null, Daily: null, Weight: 1 },
          SentToday: 0,
          Tracking: { Opens: false, Clicks: false },
          Reputation: id === zeta.id ? { ...quiet, Paused: true, PausedAt: pause.at, PausedReason: pause.reason } : { ...quiet, Paused: false, PausedAt: null, PausedReason: null },
        })),
      ApiKey: null,
    });
  });

  it('generates a key shown once, which sends; a second generate is 409; reading shows it masked', async () => {
    await clearOfTurn(HOUR_MS, 15_000);
    const someone = await user({ organizations: ['Acme'] });
    const token = await tokenFor(someone.email.toUpperCase());
    const generated = await call('POST', '/v1.2/me/api-key', token);
    expect(generated.status).toBe(201);
    expect(generated.headers.get('cache-control')).toBe('no-store');
    const { Key, Masked, CreatedAt } = (await generated.json()) as Record<string, string>;
    expect(Key).toMatch(/^tme_[0-9A-Za-z]{49}$/);
    expect(Masked).toBe(`tme_…${Key!.slice(-4)}`);

    expect((await send(Key!, someone.organizations[0]!.id)).status).toBe(200);
    expect((await call('POST', '/v1.2/me/api-key', token)).status).toBe(409);
    const me = (await (await call('GET', '/v1.2/me', token)).json()) as Record<string, unknown>;
    expect(me.ApiKey).toEqual({ Masked, CreatedAt, Revealable: true, LastUsedAt: useHour(Date.now()), Test: false });
    expect(JSON.stringify(me)).not.toContain(Key);
  });

  it('415 for a body that is not application/json or is compressed, as on the send endpoint; no body needs no media type', async () => {
    const someone = await user({ organizations: ['Acme'] });
    const token = await tokenFor(someone.email);
    const raw = (headers: Record<string, string>) => fetch(`${base}/v1.2/me/api-key`, { method: 'POST', headers: { authorization: `Bearer ${token}`, ...headers }, body: '{"Scopes":["send"]}' });
    const plain = await raw({ 'content-type': 'text/plain' });
    expect([plain.status, ((await plain.json()) as { type: string }).type]).toEqual([415, expect.stringMatching(/\/unsupported-media-type$/)]);
    const zipped = await raw({ 'content-type': 'application/json', 'content-encoding': 'gzip' });
    expect([zipped.status, zipped.headers.get('accept-encoding')]).toEqual([415, 'identity']);
    expect((await call('GET', '/v1.2/me', token)).status).toBe(200);
    expect(((await (await call('GET', '/v1.2/me', token)).json()) as { ApiKey: unknown }).ApiKey).toBeNull();
    expect((await call('POST', '/v1.2/me/api-key', token)).status).toBe(201);
  });

  it('rotates: the old key is refused, the new one sends; rotate without a key is 404', async () => {
    const someone = await user({ organizations: ['Acme'] });
    const token = await tokenFor(someone.email);
    expect((await call('POST', '/v1.2/me/api-key/rotate', token)).status).toBe(404);
    const first = ((await (await call('POST', '/v1.2/me/api-key', token)).json()) as { Key: string }).Key;
    const rotated = await call('POST', '/v1.2/me/api-key/rotate', token);
    expect(rotated.status).toBe(200);
    const second = ((await rotated.json()) as { Key: string }).Key;
    expect(second).not.toBe(first);
    expect((await send(first, someone.organizations[0]!.id)).status).toBe(401);
    expect((await send(second, someone.organizations[0]!.id)).status).toBe(200);
  });

  it('revokes: the key is refused, the user has none; revoking again is still 204', async () => {
    const someone = await user({ organizations: ['Acme'] });
    const token = await tokenFor(someone.email);
    const key = ((await (await call('POST', '/v1.2/me/api-key', token)).json()) as { Key: string }).Key;
    const revoked = await call('DELETE', '/v1.2/me/api-key', token);
    expect([revoked.status, await revoked.text()]).toEqual([204, '']);
    expect((await send(key, someone.organizations[0]!.id)).status).toBe(401);
    expect(((await (await call('GET', '/v1.2/me', token)).json()) as Record<string, unknown>).ApiKey).toBeNull();
    expect((await call('DELETE', '/v1.2/me/api-key', token)).status).toBe(204);
  });

  it('keeps to the one-key rule the admin CLI keeps: a key the operator made blocks generate', async () => {
    const someone = await user();
    await harness.admin.generateKey(someone.id);
    const response = await call('POST', '/v1.2/me/api-key', await tokenFor(someone.email));
    expect(response.status).toBe(409);
    expect(((await response.json()) as { type: string }).type).toMatch(/\/key-exists$/);
  });

  it('never logs the plain key or the token, even at DEBUG', async () => {
    const someone = await user();
    const token = await tokenFor(someone.email);
    const level = process.env.POWERTOOLS_LOG_LEVEL;
    process.env.POWERTOOLS_LOG_LEVEL = 'DEBUG';
    api.setHandler(createHandler(harness.deps) as unknown as LambdaHandler, settingsRoutes({ provider, store: harness.config, credentials: undefined, env: SEALING_ENV }));
    process.env.POWERTOOLS_LOG_LEVEL = level;
    const written: string[] = [];
    const capture = (chunk: unknown) => {
      written.push(String(chunk));
      return true;
    };
    const out = jest.spyOn(process.stdout, 'write').mockImplementation(capture as never);
    const err = jest.spyOn(process.stderr, 'write').mockImplementation(capture as never);
    let key: string;
    try {
      key = ((await (await call('POST', '/v1.2/me/api-key', token)).json()) as { Key: string }).Key;
      await call('POST', '/v1.2/me/api-key/rotate', token);
      key = ((await (await call('GET', '/v1.2/me/api-key', token)).json()) as { Key: string }).Key;
    } finally {
      out.mockRestore();
      err.mockRestore();
    }
    expect(written.join('')).toContain('request finished');
    // The reveal is an event in the log, naming the user, never the key.
    expect(written.filter((line) => line.includes('"ApiKeyRevealed"')).join('')).toContain(someone.id);
    expect(written.join('')).not.toContain(key);
    expect(written.join('')).not.toContain(token);
  });
});

describe('who gets nothing', () => {
  it('a signed-in e-mail with no service user: 403 no-access, on every operation', async () => {
    const token = await tokenFor('stranger@example.org');
    for (const [method, path] of [['GET', '/v1.2/me'], ['POST', '/v1.2/me/api-key'], ['POST', '/v1.2/me/api-key/rotate'], ['DELETE', '/v1.2/me/api-key']] as const) {
      const response = await call(method, path, token);
      expect([method, path, response.status]).toEqual([method, path, 403]);
      expect(((await response.json()) as { type: string }).type).toMatch(/\/no-access$/);
    }
  });

  async function refused(token: string | undefined): Promise<void> {
    const response = await call('GET', '/v1.2/me', token);
    expect(response.status).toBe(401);
    // No credentials at all: the realm alone, no error code (RFC 6750 section 3.1), as on the send endpoint.
    expect(response.headers.get('www-authenticate')).toBe(token === undefined ? 'Bearer realm="email-send-api"' : 'Bearer realm="email-send-api", error="invalid_token"');
    expect(((await response.json()) as { type: string }).type).toMatch(/\/invalid-access-token$/);
  }

  it('401 without a token, and with an API key instead of one', async () => {
    const someone = await user();
    const { key } = await harness.admin.generateKey(someone.id);
    await refused(undefined);
    await refused(key);
  });

  it('401 for a token whose signature does not verify', async () => {
    const someone = await user();
    const [header, payload, signature] = (await tokenFor(someone.email)).split('.');
    const flipped = `${signature!.slice(0, -2)}${signature!.endsWith('AA') ? 'BB' : 'AA'}`;
    await refused(`${header}.${payload}.${flipped}`);
    // Validly signed, but by a key that is not the issuer's.
    const impostor = await otherProvider({ issuer: provider.issuer, signingKeys: [await newKey()] });
    await refused(await tokenFor(someone.email, impostor));
  });

  it('401 for a token of another issuer, and for another client (audience), though signed with the right key', async () => {
    const someone = await user();
    const elsewhere = await otherProvider({});
    await refused(await tokenFor(someone.email, elsewhere));
    const otherClient = await otherProvider({ issuer: provider.issuer, clientId: 'another-app' });
    await refused(await tokenFor(someone.email, otherClient));
  });

  it('401 for an expired token', async () => {
    const someone = await user();
    // Three seconds, not one: a token's exp is whole seconds after an iat rounded down, so a
    // one-second token could expire before its first use on a slow machine.
    const shortLived = await otherProvider({ issuer: provider.issuer, accessTokenTtlSeconds: 3 });
    const token = await tokenFor(someone.email, shortLived);
    expect((await call('GET', '/v1.2/me', token)).status).toBe(200);
    const { exp = 0 } = decodeJwt(token);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, exp * 1_000 - Date.now()) + 1_100));
    await refused(token);
  });

  it('401 for an ID token, though signed by the issuer for this client (only access tokens open the settings API)', async () => {
    const someone = await user();
    const { idToken, accessToken } = await signIn({ issuer: provider.endpoint, clientId: provider.clientId, redirectUri: `${base}/settings`, email: someone.email });
    await refused(idToken);
    expect((await call('GET', '/v1.2/me', accessToken)).status).toBe(200);
  });

  it('401 on the send endpoint for an access token', async () => {
    const someone = await user({ organizations: ['Acme'] });
    const response = await send(await tokenFor(someone.email), someone.organizations[0]!.id);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
  });
});

describe('the key shown again (GET /v1.2/me/api-key)', () => {
  it('gives the owner the very key generate gave, never cached, kept sealed (not plain) beside its hash', async () => {
    const someone = await user({ organizations: ['Acme'] });
    const token = await tokenFor(someone.email);
    const made = (await (await call('POST', '/v1.2/me/api-key', token)).json()) as Record<string, string>;
    const shown = await call('GET', '/v1.2/me/api-key', token);
    expect([shown.status, shown.headers.get('cache-control')]).toEqual([200, 'no-store']);
    expect(await shown.json()).toEqual(made);
    const { Item } = await documents.send(new GetCommand({ TableName: harness.config.tableName, Key: itemKey.user(someone.id) }));
    expect(String(Item?.sealedKey)).toMatch(/^local:v1:/);
    expect(JSON.stringify(Item)).not.toContain(made.Key);
    // Rotated: the new key, and the old one is gone from the seal too.
    const rotated = (await (await call('POST', '/v1.2/me/api-key/rotate', token)).json()) as Record<string, string>;
    expect(((await (await call('GET', '/v1.2/me/api-key', token)).json()) as Record<string, string>).Key).toBe(rotated.Key);
  });

  it('404 with no key; 409 key-not-revealable for a key the admin CLI made (only its hash is kept)', async () => {
    const someone = await user();
    const token = await tokenFor(someone.email);
    const none = await call('GET', '/v1.2/me/api-key', token);
    expect([none.status, ((await none.json()) as { type: string }).type]).toEqual([404, expect.stringMatching(/\/no-key$/)]);
    await harness.admin.generateKey(someone.id);
    const old = await call('GET', '/v1.2/me/api-key', token);
    expect([old.status, ((await old.json()) as { type: string }).type]).toEqual([409, expect.stringMatching(/\/key-not-revealable$/)]);
    expect(((await (await call('GET', '/v1.2/me', token)).json()) as { ApiKey: { Revealable: boolean } }).ApiKey.Revealable).toBe(false);
  });

  it('with API_KEY_REVEAL=false seals nothing and shows nothing again (409), also for a key sealed before', async () => {
    const someone = await user();
    const token = await tokenFor(someone.email);
    await call('POST', '/v1.2/me/api-key', token);
    api.setHandler(createHandler(harness.deps) as unknown as LambdaHandler, settingsRoutes({ provider, store: harness.config, credentials: undefined, env: { ...SEALING_ENV, API_KEY_REVEAL: 'false' } }));
    try {
      expect((await call('GET', '/v1.2/me/api-key', token)).status).toBe(409);
      expect((await call('POST', '/v1.2/me/api-key/rotate', token)).status).toBe(200);
      const { Item } = await documents.send(new GetCommand({ TableName: harness.config.tableName, Key: itemKey.user(someone.id) }));
      expect(Item?.sealedKey).toBeUndefined();
      expect(((await (await call('GET', '/v1.2/me', token)).json()) as { ApiKey: { Revealable: boolean } }).ApiKey.Revealable).toBe(false);
    } finally {
      api.setHandler(createHandler(harness.deps) as unknown as LambdaHandler, settingsRoutes({ provider, store: harness.config, credentials: undefined, env: SEALING_ENV }));
    }
  });
});

/** An SES event about one message of `organizationId`, as the events queue delivers it. */
function sesEvent(type: 'Send' | 'Delivery' | 'Bounce' | 'Open' | 'Click', organizationId: string, messageId: string, to: string, sentAt: string, at?: string): string {
  const record = variant(RECORDS[type]!, (copy) => {
    if (at) Object.assign(copy.delivery ?? copy.open ?? copy.click ?? {}, { timestamp: at });
    copy.mail = mail({ messageId, destination: [to], timestamp: sentAt, commonHeaders: { from: ['Acme <noreply@example.com>'], to: [to], messageId, subject: `<b>Order</b> ${messageId}` } });
    copy.mail.tags.OrganizationId = [organizationId];
    if (copy.delivery) copy.delivery.recipients = [to];
    if (copy.bounce) copy.bounce.bouncedRecipients = [{ emailAddress: to, action: 'failed', status: '5.1.1' }];
  });
  return JSON.stringify(eventBridge(record));
}

describe('Activity (GET /v1.2/me/messages)', () => {
  let events: EventsDependencies;
  beforeAll(() => {
    const quiet = { enqueue: async () => undefined };
    events = {
      deliveries: new DynamoDbDeliveryStore(documents, harness.config.tableName),
      engagement: new DynamoDbEngagementStore(documents, harness.config.tableName),
      suppressions: new DynamoDbSuppressionStore(documents, harness.config.tableName),
      webhooks: { get: async () => undefined },
      activity: new DynamoDbActivityStore(documents, harness.config.tableName),
      outbox: quiet as never,
      retentionDays: 30,
      reputation: new DynamoDbReputationStore(documents, harness.config.tableName),
      thresholds: { bounceRate: 0.05, complaintRate: 0.001, minSends: 200 },
      logger: createLogger(),
      metrics: createMetrics(),
      now: Date.now,
    };
  });

  it('lists the messages SES reported on, newest first, with the status the events reached (never backwards), its Organization and recipients', async () => {
    const someone = await user({ organizations: ['Acme', 'Beta'] });
    const [acme, beta] = someone.organizations as [{ id: string; name: string }, { id: string; name: string }];
    // Out of order: the bounce before the send; a late delivery changes nothing after it.
    await recordEvent(sesEvent('Bounce', acme.id, 'm-1', 'gone@example.org', '2026-11-20T10:00:00.000Z'), events);
    await recordEvent(sesEvent('Send', acme.id, 'm-1', 'gone@example.org', '2026-11-20T10:00:00.000Z'), events);
    await recordEvent(sesEvent('Send', beta.id, 'm-2', 'ada@example.org', '2026-11-20T11:00:00.000Z'), events);
    await recordEvent(sesEvent('Delivery', beta.id, 'm-2', 'ada@example.org', '2026-11-20T11:00:00.000Z'), events);
    await recordEvent(sesEvent('Send', beta.id, 'm-2', 'ada@example.org', '2026-11-20T11:00:00.000Z'), events);
    const token = await tokenFor(someone.email);

    const all = await call('GET', '/v1.2/me/messages', token);
    expect(all.status).toBe(200);
    expect(await all.json()).toEqual({
      Messages: [
        { MessageId: 'm-2', OrganizationId: beta.id, OrganizationName: 'Beta', SentAt: '2026-11-20T11:00:00.000Z', From: 'Acme <noreply@example.com>', Recipients: ['ada@example.org'], Subject: '<b>Order</b> m-2', Status: 'Delivered', Opens: 0, Clicks: 0 },
        { MessageId: 'm-1', OrganizationId: acme.id, OrganizationName: 'Acme', SentAt: '2026-11-20T10:00:00.000Z', From: 'Acme <noreply@example.com>', Recipients: ['gone@example.org'], Subject: '<b>Order</b> m-1', Status: 'Bounced', Opens: 0, Clicks: 0 },
      ],
      Cursor: null,
    });
    const ids = async (query: string) => ((await (await call('GET', `/v1.2/me/messages?${query}`, token)).json()) as { Messages: { MessageId: string }[] }).Messages.map((m) => m.MessageId);
    expect(await ids(`organizationId=${acme.id}`)).toEqual(['m-1']);
    expect(await ids('status=Bounced')).toEqual(['m-1']);
    expect(await ids('recipient=ADA%40example.org')).toEqual(['m-2']);
    expect(await ids(`recipient=ada%40example.org&organizationId=${acme.id}`)).toEqual([]);
  });

  it('shows the opens by people and the clicks of a tracked message, an open that came before the row included', async () => {
    const someone = await user({ organizations: ['Reader'] });
    const [reader] = someone.organizations as [{ id: string; name: string }];
    const sentAt = '2026-11-20T13:00:00.000Z';
    const event = (type: 'Send' | 'Delivery' | 'Open' | 'Click', at?: string) => recordEvent(sesEvent(type, reader.id, 'o-1', 'ada@example.org', sentAt, at), events);
    await event('Open', '2026-11-20T13:05:00.000Z');
    await event('Send');
    await event('Delivery', '2026-11-20T13:00:01.000Z');
    // Within 2 s of the delivery: a machine's, not counted.
    await event('Open', '2026-11-20T13:00:02.000Z');
    await event('Open', '2026-11-20T13:06:00.000Z');
    await event('Click', '2026-11-20T13:06:30.000Z');
    const token = await tokenFor(someone.email);
    const { Messages } = (await (await call('GET', `/v1.2/me/messages?organizationId=${reader.id}`, token)).json()) as { Messages: Record<string, unknown>[] };
    expect(Messages.map((m) => [m.MessageId, m.Status, m.Opens, m.Clicks])).toEqual([['o-1', 'Delivered', 2, 1]]);
    const byRecipient = (await (await call('GET', '/v1.2/me/messages?recipient=ada%40example.org', token)).json()) as { Messages: Record<string, unknown>[] };
    expect(byRecipient.Messages.map((m) => [m.MessageId, m.Opens, m.Clicks])).toEqual([['o-1', 2, 1]]);
  });

  it('marks a test-mode message "Test": true, and leaves the live suppression list alone for its bounce', async () => {
    const someone = await user({ organizations: ['Tester'] });
    const [tester] = someone.organizations as [{ id: string; name: string }];
    const id = 'test-0c4f3c1e-9f0a-4a8e-9d1b-5c7e2a4d8f10';
    await recordEvent(sesEvent('Send', tester.id, id, 'bounce@simulator.amazonses.com', '2026-11-20T12:00:00.000Z'), events);
    await recordEvent(sesEvent('Bounce', tester.id, id, 'bounce@simulator.amazonses.com', '2026-11-20T12:00:00.000Z'), events);
    await recordEvent(sesEvent('Send', tester.id, 'live-1', 'ada@example.org', '2026-11-20T11:00:00.000Z'), events);
    const token = await tokenFor(someone.email);
    const { Messages } = (await (await call('GET', '/v1.2/me/messages', token)).json()) as { Messages: Record<string, unknown>[] };
    expect(Messages.map((m) => [m.MessageId, m.Status, m.Test])).toEqual([
      [id, 'Bounced', true],
      ['live-1', 'Sent', undefined],
    ]);
    const suppressed = (await (await call('GET', `/v1.2/me/suppressions?organizationId=${tester.id}`, token)).json()) as Record<string, unknown>;
    expect(JSON.stringify(suppressed)).not.toContain('bounce@simulator.amazonses.com');
  });

  it('pages by 50 with a cursor across Organizations, showing each message once', async () => {
    const someone = await user({ organizations: ['One', 'Two'] });
    const store = new DynamoDbActivityStore(documents, harness.config.tableName);
    const written: string[] = [];
    for (let i = 0; i < 70; i++) {
      const organizationId = someone.organizations[i % 2]!.id;
      const sentAt = new Date(Date.UTC(2026, 10, 20, 12, 0, i)).toISOString();
      await store.record({ messageId: `p-${i}`, organizationId, sentAt, from: 'a@example.com', recipients: ['b@example.org'], subject: 's', status: 'Sent' }, 1, 2_000_000_000);
      written.push(`p-${i}`);
    }
    const token = await tokenFor(someone.email);
    const first = (await (await call('GET', '/v1.2/me/messages', token)).json()) as { Messages: { MessageId: string }[]; Cursor: string };
    expect(first.Messages).toHaveLength(50);
    const second = (await (await call('GET', `/v1.2/me/messages?cursor=${first.Cursor}`, token)).json()) as { Messages: { MessageId: string }[]; Cursor: string | null };
    expect(second.Cursor).toBeNull();
    expect([...first.Messages, ...second.Messages].map((m) => m.MessageId)).toEqual(written.reverse());
  });

  it('finds a rare status behind more than a Query\'s worth of newer messages of other statuses, on the first page', async () => {
    const someone = await user({ organizations: ['Busy'] });
    const organizationId = someone.organizations[0]!.id;
    const store = new DynamoDbActivityStore(documents, harness.config.tableName);
    const entry = (i: number, status: 'Bounced' | 'Delivered') => ({ messageId: `r-${i}`, organizationId, sentAt: new Date(Date.UTC(2026, 10, 20, 12, 0, 0, i)).toISOString(), from: 'a@example.com', recipients: ['b@example.org'], subject: 's', status });
    await store.record(entry(0, 'Bounced'), 1, 2_000_000_000);
    // Newer than it: more Delivered messages than one filtered Query reads.
    const newer = Array.from({ length: FILTERED_READ_ITEMS + 60 }, (_, i) => entry(i + 1, 'Delivered'));
    for (let i = 0; i < newer.length; i += 25) await Promise.all(newer.slice(i, i + 25).map((e) => store.record(e, 1, 2_000_000_000)));
    const token = await tokenFor(someone.email);
    const page = (await (await call('GET', '/v1.2/me/messages?status=Bounced', token)).json()) as { Messages: { MessageId: string }[]; Cursor: string | null };
    expect(page).toEqual({ Messages: [expect.objectContaining({ MessageId: 'r-0', Status: 'Bounced' })], Cursor: null });
  });

  it('refuses another Organization (403, as an unknown one), a malformed Organization id, a bad status or address, and a forged cursor (400 naming the parameter)', async () => {
    const someone = await user({ organizations: ['Mine'] });
    const stranger = await user({ organizations: ['Theirs'] });
    const token = await tokenFor(someone.email);
    for (const organizationId of [stranger.organizations[0]!.id, '00000000-0000-4000-8000-000000000000']) {
      const response = await call('GET', `/v1.2/me/messages?organizationId=${organizationId}`, token);
      expect([response.status, ((await response.json()) as { type: string }).type]).toEqual([403, expect.stringMatching(/\/organization-forbidden$/)]);
    }
    const forged = Buffer.from(JSON.stringify({ [stranger.organizations[0]!.id]: '' })).toString('base64url');
    for (const [query, pointer] of [['organizationId=not-an-id', '/organizationId'], ['status=Lost', '/status'], ['recipient=nobody', '/recipient'], [`cursor=${forged}`, '/cursor']]) {
      const response = await call('GET', `/v1.2/me/messages?${query}`, token);
      expect([response.status, ((await response.json()) as { errors: { pointer: string }[] }).errors[0]!.pointer]).toEqual([400, pointer]);
    }
  });
});

describe('Suppressions (GET and DELETE /v1.2/me/suppressions)', () => {
  it('lists each member Organization\'s suppressed addresses, removes one as "suppression remove" does, and touches no other Organization', async () => {
    const someone = await user({ organizations: ['Acme'] });
    const stranger = await user({ organizations: ['Theirs'] });
    const [acme, theirs] = [someone.organizations[0]!.id, stranger.organizations[0]!.id];
    const suppressions = new DynamoDbSuppressionStore(documents, harness.config.tableName);
    await suppressions.add(acme, [{ address: 'gone@example.org', reason: 'Bounce', at: '2026-11-20T10:00:00.000Z' }]);
    await suppressions.add(theirs, [{ address: 'gone@example.org', reason: 'Complaint', at: '2026-11-20T10:00:00.000Z' }]);
    const token = await tokenFor(someone.email);

    const listed = await call('GET', '/v1.2/me/suppressions', token);
    expect(await listed.json()).toEqual({ Suppressions: [{ OrganizationId: acme, Address: 'gone@example.org', Reason: 'Bounce', At: '2026-11-20T10:00:00.000Z' }] });
    expect((await call('GET', `/v1.2/me/suppressions?organizationId=${theirs}`, token)).status).toBe(403);
    expect((await call('DELETE', `/v1.2/me/suppressions?organizationId=${theirs}&address=gone%40example.org`, token)).status).toBe(403);
    expect((await call('DELETE', `/v1.2/me/suppressions?organizationId=${acme}&address=nobody`, token)).status).toBe(400);

    const removed = await call('DELETE', `/v1.2/me/suppressions?organizationId=${acme}&address=GONE%40example.org`, token);
    expect(removed.status).toBe(204);
    expect(await suppressions.list(acme)).toEqual([]);
    expect(await suppressions.list(theirs)).toHaveLength(1);
    const again = await call('DELETE', `/v1.2/me/suppressions?organizationId=${acme}&address=gone%40example.org`, token);
    expect([again.status, ((await again.json()) as { type: string }).type]).toEqual([404, expect.stringMatching(/\/not-suppressed$/)]);
  });
});
