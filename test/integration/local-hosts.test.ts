/**
 * DNS rebinding on the local stack (security audit round 2, finding 2): a page on a domain that
 * resolves to 127.0.0.1 must get nothing from any local server, so each accepts only
 * `Host: 127.0.0.1:<port>` or `localhost:<port>`. Every request here goes to 127.0.0.1; only its
 * Host header names another place. Also: the local OpenID provider answers no `form_post`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { RunningService } from '../../infra/local/emulators';
import { closeServer, listening, startDynamoDb } from '../../infra/local/emulators';
import { createApiServer } from '../../infra/local/gateway/server';
import type { ApiServer } from '../../infra/local/gateway/server';
import type { LocalOidcProvider } from '../../infra/local/oidc/provider';
import { startLocalOidcProvider } from '../../infra/local/oidc/provider';
import { startLocalSes } from '../../infra/local/ses-rate-gate';

let api: ApiServer;
let apiPort: number;
let provider: LocalOidcProvider;
let ses: RunningService & { upstream: string };
let dynamo: RunningService;
const redirectUri = () => `http://127.0.0.1:${apiPort}/settings`;

beforeAll(async () => {
  api = createApiServer({ index: () => ({ service: 'test' }) });
  apiPort = await listening(api.server, 0);
  [provider, ses, dynamo] = await Promise.all([
    startLocalOidcProvider({ port: 0, redirectUris: [redirectUri()] }),
    startLocalSes({ port: 0 }),
    startDynamoDb(),
  ]);
});

afterAll(async () => {
  await Promise.all([closeServer(api.server), provider.close(), ses.close(), dynamo.close()]);
});

/** One GET to 127.0.0.1:`port` with this Host header; the status. */
function statusFor(port: number, path: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET', headers: { host } }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('error', reject);
    req.end();
  });
}

const servers = (): [string, number, string][] => [
  ['the gateway (API and settings page)', apiPort, '/'],
  ['the gateway\'s API documentation', apiPort, '/docs'],
  ['the local OpenID provider', provider.port, '/.well-known/openid-configuration'],
  ['the SES front and mail viewer', ses.port, '/'],
  ['the SES emulator behind the front', Number(new URL(ses.upstream).port), '/'],
  ['dynalite', dynamo.port, '/'],
];

describe('every local server refuses a Host that is not this machine', () => {
  it.each(['rebind.attacker.example', 'rebind.attacker.example:{port}', '127.0.0.1.attacker.example:{port}', '127.0.0.1:1', 'localhost.:{port}', '[::1]:{port}'])(
    'answers 421 for Host %s',
    async (host) => {
      for (const [name, port, path] of servers()) {
        expect([name, await statusFor(port, path, host.replace('{port}', String(port)))]).toEqual([name, 421]);
      }
    },
  );

  it('judges a request in absolute form by the host its target names, not by Host (RFC 9112 3.2.2)', async () => {
    for (const [name, port, path] of servers()) {
      const here = await statusFor(port, path, `127.0.0.1:${port}`);
      expect([name, await statusFor(port, `http://127.0.0.1:${port}${path}`, 'rebind.attacker.example')]).toEqual([name, here]);
      expect([name, await statusFor(port, `http://rebind.attacker.example:${port}${path}`, `127.0.0.1:${port}`)]).toEqual([name, 421]);
    }
    // The path as written, as in origin form: `%2e%2e` is not resolved into another route.
    const here = `127.0.0.1:${apiPort}`;
    const dotted = '/elsewhere/%2e%2e/docs';
    const asWritten = await statusFor(apiPort, dotted, here);
    expect(asWritten).not.toBe(await statusFor(apiPort, '/docs', here));
    expect(await statusFor(apiPort, `http://${here}${dotted}`, 'rebind.attacker.example')).toBe(asWritten);
  });

  it('serves 127.0.0.1:<port> and localhost:<port> as before', async () => {
    for (const [name, port, path] of servers()) {
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`]) {
        expect([name, host, await statusFor(port, path, host)]).not.toEqual([name, host, 421]);
      }
    }
  });
});

describe('the local OpenID provider', () => {
  function authorize(extra: Record<string, string>, method = 'GET'): Promise<Response> {
    const url = new URL(`${provider.endpoint}/auth`);
    const params = {
      client_id: provider.clientId,
      redirect_uri: redirectUri(),
      response_type: 'code',
      scope: 'openid email',
      state: randomBytes(8).toString('hex'),
      code_challenge: createHash('sha256').update(randomBytes(32)).digest('base64url'),
      code_challenge_method: 'S256',
      ...extra,
    };
    if (method === 'GET') {
      for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
      return fetch(url, { redirect: 'manual' });
    }
    return fetch(url, { method, redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(params).toString() });
  }

  it('starts a sign-in for the page\'s ordinary request (response in the query)', async () => {
    const response = await authorize({});
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toMatch(/^\/interaction\//);
  });

  it('refuses response_mode=form_post, whether asked for in the query or in a posted form', async () => {
    for (const response of [await authorize({ response_mode: 'form_post' }), await authorize({ response_mode: 'form_post' }, 'POST')]) {
      expect(response.status).toBe(400);
      expect(response.headers.get('location')).toBeNull();
      expect(await response.text()).not.toMatch(/<form/i);
    }
  });
});
