/**
 * IdentityResolver: the verified e-mail behind an access token. The local provider's tokens
 * carry it; a Cognito access token does not, and the resolver asks the issuer's userinfo
 * endpoint, played here by a small HTTP server that answers as Cognito's does
 * (`email_verified` as the string "true").
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { IdentityResolver } from '../../functions/me/identity';
import { IdentityProviderUnavailableProblem, InvalidAccessTokenProblem, NoAccessProblem } from '../../functions/me/problems';
import { closeServer, listening } from '../../infra/local/emulators';

let issuer: string;
const server = createServer((req, res) => answer(req, res));
let answer: (req: IncomingMessage, res: ServerResponse) => void;
let calls: { path: string | undefined; authorization: string | undefined }[];
const future = () => Math.floor(Date.now() / 1_000) + 600;

function userinfo(status: number, body: Record<string, unknown>): void {
  answer = (req, res) => {
    calls.push({ path: req.url, authorization: req.headers.authorization });
    const json = req.url === '/.well-known/openid-configuration' ? { issuer, userinfo_endpoint: `${issuer}/oauth2/userInfo` } : body;
    res.writeHead(req.url === '/.well-known/openid-configuration' ? 200 : status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
  };
}

beforeAll(async () => {
  issuer = `http://127.0.0.1:${await listening(server, 0)}`;
});
afterAll(() => closeServer(server));
beforeEach(() => {
  calls = [];
});

describe('IdentityResolver', () => {
  it('takes a verified e-mail the token carries, as API Gateway hands claims on (strings), without a call', async () => {
    userinfo(500, {});
    const resolver = new IdentityResolver({ issuer });
    await expect(resolver.resolve({ sub: 'u-1', email: 'ada@example.com', email_verified: 'true' }, 'Bearer t')).resolves.toEqual({ subject: 'u-1', email: 'ada@example.com' });
    expect(calls).toEqual([]);
  });

  it('asks the userinfo endpoint found by discovery, with the same token, once per token', async () => {
    userinfo(200, { sub: 'u-2', email: 'bob@example.com', email_verified: 'true', username: 'bob' });
    const resolver = new IdentityResolver({ issuer });
    const claims = { sub: 'u-2', client_id: 'page', exp: future() };
    await expect(resolver.resolve(claims, 'Bearer token-2')).resolves.toEqual({ subject: 'u-2', email: 'bob@example.com' });
    await expect(resolver.resolve(claims, 'Bearer token-2')).resolves.toEqual({ subject: 'u-2', email: 'bob@example.com' });
    expect(calls).toEqual([
      { path: '/.well-known/openid-configuration', authorization: undefined },
      { path: '/oauth2/userInfo', authorization: 'Bearer token-2' },
    ]);
  });

  it('keeps an answer until the token expires, and never more than ten minutes', async () => {
    userinfo(200, { sub: 'u-6', email: 'cy@example.com', email_verified: 'true' });
    let now = 1_700_000_000_000;
    const resolver = new IdentityResolver({ issuer, now: () => now });
    const asked = () => calls.filter((call) => call.path === '/oauth2/userInfo').length;
    const shortLived = { sub: 'u-6', exp: now / 1_000 + 60 };
    await resolver.resolve(shortLived, 'Bearer short');
    now += 59_999;
    await resolver.resolve(shortLived, 'Bearer short');
    expect(asked()).toBe(1);
    now += 1;
    await resolver.resolve(shortLived, 'Bearer short');
    expect(asked()).toBe(2);

    const longLived = { sub: 'u-6', exp: now / 1_000 + 3_600 };
    await resolver.resolve(longLived, 'Bearer long');
    now += 10 * 60_000 - 1;
    await resolver.resolve(longLived, 'Bearer long');
    expect(asked()).toBe(3);
    now += 1;
    await resolver.resolve(longLived, 'Bearer long');
    expect(asked()).toBe(4);
  });

  it('does not use an unverified e-mail a token carries, and refuses one userinfo does not verify', async () => {
    userinfo(200, { sub: 'u-3', email: 'eve@example.com', email_verified: 'false' });
    const resolver = new IdentityResolver({ issuer });
    await expect(resolver.resolve({ sub: 'u-3', email: 'eve@example.com', email_verified: false }, 'Bearer t3')).rejects.toBeInstanceOf(NoAccessProblem);
    expect(calls.map((call) => call.path)).toContain('/oauth2/userInfo');
  });

  it('refuses an answer about another subject, a token the provider refuses, and a token with no subject', async () => {
    const resolver = new IdentityResolver({ issuer });
    userinfo(200, { sub: 'someone-else', email: 'x@example.com', email_verified: true });
    await expect(resolver.resolve({ sub: 'u-4' }, 'Bearer t4')).rejects.toBeInstanceOf(InvalidAccessTokenProblem);
    userinfo(401, { error: 'invalid_token' });
    await expect(resolver.resolve({ sub: 'u-4' }, 'Bearer t4b')).rejects.toBeInstanceOf(InvalidAccessTokenProblem);
    await expect(resolver.resolve({ email: 'x@example.com', email_verified: true }, 'Bearer t4c')).rejects.toBeInstanceOf(InvalidAccessTokenProblem);
  });

  it('answers 503 when the provider fails or cannot be reached, and recovers after', async () => {
    userinfo(500, {});
    const resolver = new IdentityResolver({ issuer });
    await expect(resolver.resolve({ sub: 'u-5', exp: future() }, 'Bearer t5')).rejects.toBeInstanceOf(IdentityProviderUnavailableProblem);
    const nowhere = new IdentityResolver({ issuer: 'http://127.0.0.1:9', timeoutMs: 500 });
    await expect(nowhere.resolve({ sub: 'u-5' }, 'Bearer t5')).rejects.toBeInstanceOf(IdentityProviderUnavailableProblem);
    userinfo(200, { sub: 'u-5', email: 'five@example.com', email_verified: true });
    await expect(resolver.resolve({ sub: 'u-5', exp: future() }, 'Bearer t5')).resolves.toMatchObject({ email: 'five@example.com' });
  });
});

describe('only access tokens (functions/shared/auth/token-kind.ts)', () => {
  const jwt = (header: Record<string, unknown>) => `Bearer ${Buffer.from(JSON.stringify(header)).toString('base64url')}.e30.sig`;
  const claims = { sub: 'u-1', email: 'ada@example.com', email_verified: 'true', exp: future() };

  it('refuses a Cognito ID token (token_use "id") and takes its access token (token_use "access")', async () => {
    const resolver = new IdentityResolver({ issuer });
    await expect(resolver.resolve({ ...claims, token_use: 'id', aud: 'client' }, jwt({ alg: 'RS256' }))).rejects.toBeInstanceOf(InvalidAccessTokenProblem);
    await expect(resolver.resolve({ ...claims, token_use: 'access', client_id: 'client' }, jwt({ alg: 'RS256' }))).resolves.toEqual({ subject: 'u-1', email: 'ada@example.com' });
  });

  it('takes an RFC 9068 access token (typ at+jwt) and refuses an ID token of the code flow (at_hash, nonce) or Keycloak\'s typ "ID"', async () => {
    const resolver = new IdentityResolver({ issuer });
    await expect(resolver.resolve({ ...claims, at_hash: 'x' }, jwt({ alg: 'RS256', typ: 'at+jwt' }))).resolves.toEqual({ subject: 'u-1', email: 'ada@example.com' });
    for (const mark of [{ at_hash: 'x' }, { nonce: 'n' }, { c_hash: 'c' }, { typ: 'ID' }]) {
      await expect(resolver.resolve({ ...claims, ...mark }, jwt({ alg: 'RS256', typ: 'JWT' }))).rejects.toBeInstanceOf(InvalidAccessTokenProblem);
    }
  });
});
