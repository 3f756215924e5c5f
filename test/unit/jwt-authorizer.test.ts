/**
 * The local stand-in for API Gateway's JWT authorizer, against a JWKS served on 127.0.0.1:
 * tokens it must pass and tokens it must refuse as API Gateway does.
 */
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import type { CryptoKey } from 'jose';
import { closeServer, listening } from '../../infra/local/emulators';
import { createJwtAuthorizer } from '../../infra/local/gateway/jwt-authorizer';
import type { JwtAuthorizer } from '../../infra/local/gateway/routing';

const ISSUER = 'https://issuer.example.net';
const CLIENT = 'settings-client';
let server: Server;
let privateKey: CryptoKey;
let authorize: JwtAuthorizer;

beforeAll(async () => {
  const pair = await generateKeyPair('RS256');
  privateKey = pair.privateKey;
  const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] });
  server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(jwks));
  const port = await listening(server, 0);
  authorize = createJwtAuthorizer({ issuer: ISSUER, audience: [CLIENT], jwksUri: `http://127.0.0.1:${port}/jwks` });
});
afterAll(() => closeServer(server));

function token(claims: { exp?: boolean } = {}): Promise<string> {
  const jwt = new SignJWT({ client_id: CLIENT, email: 'ada@example.net' }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(ISSUER).setIssuedAt();
  return (claims.exp === false ? jwt : jwt.setExpirationTime('5m')).sign(privateKey);
}

describe('the local JWT authorizer', () => {
  it('passes a signed token of the issuer for the client, with an expiry', async () => {
    expect(await authorize(`Bearer ${await token()}`)).toMatchObject({ claims: { client_id: CLIENT, email: 'ada@example.net' } });
  });

  it('refuses a token with no exp claim, as API Gateway does (security audit round 2, finding 8)', async () => {
    expect(await authorize(`Bearer ${await token({ exp: false })}`)).toBeUndefined();
  });
});
