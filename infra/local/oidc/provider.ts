/**
 * The local stand-in for the deployment's OpenID provider (Amazon Cognito in AWS): oidc-provider,
 * a certified OpenID Connect implementation, on 127.0.0.1. It signs the settings page in with the
 * authorization code flow and PKCE; its sign-in form asks for an e-mail address only (no
 * password, no consent step) and signs in any address: the settings API then decides whether
 * that address belongs to a user of the service.
 *
 * Access tokens are RS256 JWTs for the page's client (`aud` and `client_id`), checked by the
 * local gateway against this provider's JWKS exactly as API Gateway's JWT authorizer checks
 * Cognito's. They carry the verified e-mail (`email`, `email_verified`); Cognito's carry none,
 * and the settings API then asks the userinfo endpoint (see functions/settings/identity.ts).
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';
import { parseEmailAddress } from '../../../functions/shared/domain/email-address';
import type { RunningService } from '../emulators';
import { closeServer, listening } from '../emulators';
import { MemoryAdapter } from './memory-adapter';
import { readAll } from '../forward';
import { guardHost } from '../host-guard';
import { LOOPBACK } from '../settings';
import { errorPage, pagePolicy, signInPage, signOutPage, signedOutPage } from './pages';

/** The settings page's client at the local provider. */
export const LOCAL_CLIENT_ID = 'email-send-api-settings';
/** The resource the page's access tokens are for; their audience is the client, as Cognito's. */
const RESOURCE = 'urn:email-send-api:settings-api';
const SCOPE = 'openid email';
/**
 * oidc-provider's authorization endpoint. Only GET, with the code returned in the query, is let
 * through to it: `form_post` (and a POSTed authorization request) would let another site's page
 * receive or start a sign-in by a form it submits (security audit round 2, finding 2); the
 * settings page never uses either.
 */
const AUTHORIZATION_PATH = '/auth';

export interface LocalOidcOptions {
  /** 0 picks a free port. */
  readonly port: number;
  /** Where the settings page may be sent back after sign-in and sign-out. */
  readonly redirectUris: readonly string[];
  readonly clientId?: string;
  /** Access token lifetime (default one hour, as Cognito's). */
  readonly accessTokenTtlSeconds?: number;
  /** Signing keys (private JWKs); a fresh RSA key when absent. */
  readonly signingKeys?: readonly Record<string, unknown>[];
  /** Overrides the issuer (default `http://127.0.0.1:<port>`); for tests of a wrong issuer. */
  readonly issuer?: string;
}

export interface LocalOidcProvider extends RunningService {
  readonly issuer: string;
  readonly clientId: string;
  readonly jwksUri: string;
}

export async function startLocalOidcProvider(options: LocalOidcOptions): Promise<LocalOidcProvider> {
  let handle: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => {
    res.writeHead(503).end();
  };
  const server = guardHost(createServer((req, res) => handle(req, res)));
  const port = await listening(server, options.port);
  const issuer = options.issuer ?? `http://${LOOPBACK}:${port}`;
  const clientId = options.clientId ?? LOCAL_CLIENT_ID;
  const keys = options.signingKeys ?? [await newSigningKey()];
  const policy = pagePolicy([...new Set(options.redirectUris.map((uri) => new URL(uri).origin))]);
  const provider = new Provider(issuer, configuration({ ...options, clientId, keys, policy }));
  const callback = provider.callback();

  handle = (req, res) => {
    const url = new URL(req.url ?? '/', issuer);
    if (url.pathname === AUTHORIZATION_PATH && (req.method !== 'GET' || (url.searchParams.get('response_mode') ?? 'query') !== 'query')) {
      send(res, policy, 400, errorPage({ error: 'invalid_request', detail: 'This provider answers authorization requests made with GET, with the code in the query only.' }));
      return;
    }
    const interaction = /^\/interaction\/([\w-]+)$/.exec(url.pathname);
    if (!interaction) {
      callback(req, res);
      return;
    }
    signIn(provider, req, res, interaction[1]!, policy).catch((error: unknown) => {
      if (res.headersSent) return res.destroy();
      send(res, policy, 400, errorPage({ error: 'sign-in failed', detail: error instanceof Error ? error.message : String(error) }));
    });
  };

  // `endpoint` is where it listens; `issuer` what its tokens say (they differ only in tests of a wrong issuer).
  return { endpoint: `http://${LOOPBACK}:${port}`, port, issuer, clientId, jwksUri: `${issuer}/jwks`, close: () => closeServer(server) };
}

async function newSigningKey(): Promise<Record<string, unknown>> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: randomBytes(8).toString('hex') };
}

function configuration(options: LocalOidcOptions & { clientId: string; keys: readonly Record<string, unknown>[]; policy: string }): Configuration {
  const html = (ctx: KoaContextWithOIDC, body: string) => {
    ctx.type = 'html';
    ctx.set('Content-Security-Policy', options.policy);
    ctx.body = body;
  };
  const ttl = options.accessTokenTtlSeconds ?? 3_600;
  return {
    adapter: MemoryAdapter,
    clients: [
      {
        client_id: options.clientId,
        client_name: 'the email API settings page',
        // A browser app keeps no secret: PKCE protects its code exchange.
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code'],
        response_types: ['code'],
        response_modes: ['query'],
        redirect_uris: [...options.redirectUris],
        post_logout_redirect_uris: [...options.redirectUris],
      },
    ],
    jwks: { keys: options.keys as never[] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    scopes: ['openid', 'email'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    async findAccount(_ctx, sub) {
      return { accountId: sub, claims: async () => ({ sub, email: sub, email_verified: true }) };
    },
    // The settings page may fetch discovery, JWKS and tokens from its own origin only.
    clientBasedCORS: (_ctx, origin, client) => client.redirectUris?.some((uri) => new URL(uri).origin === origin) ?? false,
    pkce: { required: () => true },
    ttl: { AccessToken: ttl, IdToken: ttl, AuthorizationCode: 60, Interaction: 600, Session: 86_400, Grant: 86_400 },
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => RESOURCE,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, resource) => {
          if (resource !== RESOURCE) throw new Error(`unknown resource ${resource}`);
          return { scope: 'email', audience: options.clientId, accessTokenTTL: ttl, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } };
        },
      },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: async (ctx: KoaContextWithOIDC, form: string) => html(ctx, signOutPage(form)),
        postLogoutSuccessSource: async (ctx: KoaContextWithOIDC) => html(ctx, signedOutPage()),
      },
    },
    // The access token carries the verified e-mail, so the settings API needs no userinfo call here.
    extraTokenClaims: async (_ctx, token) => (token.kind === 'AccessToken' ? { email: token.accountId, email_verified: true } : undefined),
    renderError: async (ctx, out) => html(ctx, errorPage({ ...out })),
    interactions: { url: async (_ctx, interaction) => `/interaction/${interaction.uid}` },
  } satisfies Configuration;
}

function send(res: ServerResponse, policy: string, status: number, body: string): void {
  res.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': policy, 'Cache-Control': 'no-store' });
  res.end(body);
}

/**
 * The sign-in interaction: GET shows the form; POST signs the address in and grants the page's
 * scopes at once (a first-party client: no consent step).
 */
async function signIn(provider: Provider, req: IncomingMessage, res: ServerResponse, uid: string, policy: string): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  const clientName = 'the email API settings page';
  const action = `/interaction/${uid}`;
  if (req.method !== 'POST') {
    send(res, policy, 200, signInPage({ action, clientName }));
    return;
  }
  const email = new URLSearchParams((await readAll(req)).toString('utf8')).get('email')?.trim() ?? '';
  const address = parseEmailAddress(email);
  if (!address) {
    send(res, policy, 400, signInPage({ action, clientName, email, error: 'Enter an e-mail address, such as ada@example.com.' }));
    return;
  }
  const accountId = address.ascii.toLowerCase();
  const clientId = String(details.params.client_id);
  const grant = new provider.Grant({ accountId, clientId });
  grant.addOIDCScope(SCOPE);
  grant.addResourceScope(RESOURCE, 'email');
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
}
