/**
 * Signs in at the local OpenID provider as the settings page does, over plain HTTP: the
 * authorization code flow with PKCE, through the provider's real sign-in form. The tests of the
 * settings API use the real, signed tokens this returns.
 */
import { createHash, randomBytes } from 'node:crypto';

export interface Tokens {
  readonly accessToken: string;
  readonly idToken: string;
  readonly expiresIn: number;
}

const base64url = (bytes: Buffer) => bytes.toString('base64url');

/** A tiny cookie jar: the provider's session and interaction cookies, by name. */
class Cookies {
  private readonly jar = new Map<string, string>();
  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      this.jar.set(pair!.slice(0, at).trim(), pair!.slice(at + 1).trim());
    }
  }
  header(): string {
    return [...this.jar].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

async function follow(url: string, cookies: Cookies, init: RequestInit = {}): Promise<Response> {
  const response = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), cookie: cookies.header() } });
  cookies.take(response);
  return response;
}

/** Signs `email` in for `clientId` and returns its tokens; throws with the provider's answer otherwise. */
export async function signIn(options: { issuer: string; clientId: string; redirectUri: string; email: string }): Promise<Tokens> {
  const { issuer, clientId, redirectUri } = options;
  const verifier = base64url(randomBytes(32));
  const challenge = base64url(createHash('sha256').update(verifier).digest());
  const state = base64url(randomBytes(16));
  const cookies = new Cookies();

  const authorize = new URL(`${issuer}/auth`);
  for (const [name, value] of Object.entries({
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'openid email',
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  })) {
    authorize.searchParams.set(name, value);
  }
  let response = await follow(authorize.href, cookies);
  const formUrl = new URL(response.headers.get('location') ?? fail('no sign-in redirect', response), issuer).href;
  response = await follow(formUrl, cookies);
  const form = await response.text();
  if (!form.includes('<label for="email">Email</label>')) throw new Error(`no sign-in form at ${formUrl}`);

  response = await follow(formUrl, cookies, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email: options.email }).toString(),
  });
  // The provider resumes the authorization request, then sends the browser back to the page.
  for (let hops = 0; hops < 5; hops++) {
    const location = response.headers.get('location') ?? fail('the sign-in did not redirect', response);
    const next = new URL(location, issuer);
    if (next.href.startsWith(redirectUri)) {
      if (next.searchParams.get('state') !== state) throw new Error('state mismatch');
      const code = next.searchParams.get('code') ?? fail(`no code: ${next.search}`, response);
      return exchange(issuer, { clientId, redirectUri, code, verifier });
    }
    response = await follow(next.href, cookies);
  }
  throw new Error('too many redirects');
}

async function exchange(issuer: string, options: { clientId: string; redirectUri: string; code: string; verifier: string }): Promise<Tokens> {
  const response = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: options.code,
      redirect_uri: options.redirectUri,
      client_id: options.clientId,
      code_verifier: options.verifier,
    }).toString(),
  });
  const body = (await response.json()) as Record<string, unknown>;
  if (!response.ok) throw new Error(`token exchange failed: ${JSON.stringify(body)}`);
  return { accessToken: String(body.access_token), idToken: String(body.id_token), expiresIn: Number(body.expires_in) };
}

function fail(message: string, response: Response): never {
  throw new Error(`${message} (HTTP ${response.status})`);
}
