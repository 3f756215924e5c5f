/**
 * The settings API (`/v1.2/me…`) behind the local gateway's JWT authorizer, with real tokens
 * signed by the embedded OpenID provider, against dynalite and the SES emulator: what a signed-in
 * user can see and do, and every way a token is refused. Every answer is checked against
 * openapi.json.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { exportJWK, generateKeyPair } from 'jose';
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
import { createDynamoDbClient } from '../../functions/shared/runtime/clients';
import { DynamoDbReputationStore } from '../../functions/shared/store/dynamodb-reputation-store';

let harness: Harness;
let api: ApiServer;
let base: string;
let provider: LocalOidcProvider;
let signingKey: Record<string, unknown>;
const others: LocalOidcProvider[] = [];
let stopChecking: () => void;

async function newKey(): Promise<Record<string, unknown>> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: randomBytes(6).toString('hex') };
}

beforeAll(async () => {
  harness = await startHarness();
  api = createApiServer({ problemTypeBase: harness.config.problemTypeBase });
  const port = await listening(api.server, 0);
  base = `http://127.0.0.1:${port}`;
  signingKey = await newKey();
  provider = await startLocalOidcProvider({ port: 0, redirectUris: [`${base}/settings`], signingKeys: [signingKey] });
  api.setHandler(createHandler(harness.deps) as unknown as LambdaHandler, settingsRoutes({ provider, store: harness.config, credentials: undefined }));
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
          Reputation: id === zeta.id ? { ...quiet, Paused: true, PausedAt: pause.at, PausedReason: pause.reason } : { ...quiet, Paused: false, PausedAt: null, PausedReason: null },
        })),
      ApiKey: null,
    });
  });

  it('generates a key shown once, which sends; a second generate is 409; reading shows it masked', async () => {
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
    expect(me.ApiKey).toEqual({ Masked, CreatedAt });
    expect(JSON.stringify(me)).not.toContain(Key);
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
    api.setHandler(createHandler(harness.deps) as unknown as LambdaHandler, settingsRoutes({ provider, store: harness.config, credentials: undefined }));
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
    } finally {
      out.mockRestore();
      err.mockRestore();
    }
    expect(written.join('')).toContain('request finished');
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
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="email-send-api", error="invalid_token"');
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
    const shortLived = await otherProvider({ issuer: provider.issuer, accessTokenTtlSeconds: 1 });
    const token = await tokenFor(someone.email, shortLived);
    expect((await call('GET', '/v1.2/me', token)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    await refused(token);
  });

  it('401 on the send endpoint for an access token', async () => {
    const someone = await user({ organizations: ['Acme'] });
    const response = await send(await tokenFor(someone.email), someone.organizations[0]!.id);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
  });
});
