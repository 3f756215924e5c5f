/**
 * Who is signed in: the verified e-mail address behind the access token API Gateway's JWT
 * authorizer accepted (CONTRACT section 9). The authorizer has already checked the signature,
 * issuer, audience and expiry; what is left is the e-mail, which a Cognito access token does not
 * carry, and the kind of token, which the authorizer does not check (an ID token passes it; see
 * functions/shared/auth/token-kind.ts). So:
 *
 * - a token that carries `email` with `email_verified` true (the local provider's, and any
 *   issuer configured to add them) is taken at its word;
 * - otherwise the issuer's standard userinfo endpoint is asked, with that same access token
 *   (Cognito: `/oauth2/userInfo`, which needs the `openid email` scopes the page asks for), and
 *   its answer is kept until the token expires, so a page visit costs one call, not one per
 *   request.
 */
import { createHash } from 'node:crypto';
import { isAccessToken, jwtHeader } from '../shared/auth/token-kind';
import { ExpiringCache } from '../shared/runtime/expiring-cache';
import { IdentityProviderUnavailableProblem, InvalidAccessTokenProblem, NoAccessProblem } from './problems';

/** The claims API Gateway hands on (values may arrive as strings, as it passes them). */
export type Claims = Readonly<Record<string, unknown>>;

export interface Identity {
  readonly subject: string;
  /** Verified by the OpenID provider. */
  readonly email: string;
}

export interface IdentityOptions {
  /** The issuer the authorizer trusts; its discovery document names the userinfo endpoint. */
  readonly issuer: string | undefined;
  /** Overrides discovery. */
  readonly userinfoEndpoint?: string | undefined;
  readonly timeoutMs?: number;
  readonly now?: () => number;
}

/** An answer is kept at most this long, even for a long-lived token. */
const MAX_CACHE_MS = 10 * 60_000;

const isTrue = (value: unknown) => value === true || value === 'true';
const tokenOf = (authorization: string | undefined) => /^Bearer\s+(\S+)$/i.exec(authorization?.trim() ?? '')?.[1];

export class IdentityResolver {
  private endpoint: Promise<string> | undefined;
  private readonly answers: ExpiringCache<string, Identity>;

  constructor(private readonly options: IdentityOptions) {
    this.answers = new ExpiringCache({ max: 1_000, ...(options.now && { now: options.now }) });
  }

  async resolve(claims: Claims | undefined, authorization: string | undefined): Promise<Identity> {
    const subject = claims?.sub;
    if (typeof subject !== 'string' || subject === '') throw new InvalidAccessTokenProblem();
    // The authorizer lets an ID token through (its audience is the page's client); only access tokens open this API.
    if (!isAccessToken(claims ?? {}, jwtHeader(tokenOf(authorization)))) throw new InvalidAccessTokenProblem();
    if (typeof claims?.email === 'string' && isTrue(claims.email_verified)) return { subject, email: claims.email };

    const token = tokenOf(authorization);
    if (!token) throw new InvalidAccessTokenProblem();
    const cacheKey = createHash('sha256').update(token).digest('hex');
    const known = this.answers.get(cacheKey);
    if (known) return known;

    const identity = await this.askUserinfo(token, subject);
    const now = (this.options.now ?? Date.now)();
    const expiresAt = Number(claims?.exp) * 1_000;
    const ttl = Math.min(MAX_CACHE_MS, Number.isFinite(expiresAt) ? expiresAt - now : 0);
    this.answers.set(cacheKey, identity, ttl);
    return identity;
  }

  private async askUserinfo(token: string, subject: string): Promise<Identity> {
    let response: Response;
    try {
      response = await fetch(await this.userinfoEndpoint(), {
        headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 3_000),
      });
    } catch (error) {
      this.endpoint = undefined;
      throw new IdentityProviderUnavailableProblem({ cause: error });
    }
    // The provider no longer accepts the token (signed out everywhere, user disabled).
    if (response.status === 401 || response.status === 403) throw new InvalidAccessTokenProblem();
    if (!response.ok) throw new IdentityProviderUnavailableProblem({ cause: new Error(`userinfo answered ${response.status}`) });
    const info = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    // OpenID Connect Core 5.3.2: an answer about another subject must not be used.
    if (info.sub !== subject) throw new InvalidAccessTokenProblem();
    if (typeof info.email !== 'string' || !isTrue(info.email_verified)) throw new NoAccessProblem();
    return { subject, email: info.email };
  }

  private userinfoEndpoint(): Promise<string> {
    if (this.options.userinfoEndpoint) return Promise.resolve(this.options.userinfoEndpoint);
    this.endpoint ??= discover(this.options.issuer);
    return this.endpoint;
  }
}

async function discover(issuer: string | undefined): Promise<string> {
  if (!issuer) throw new Error('OIDC_ISSUER is not set, so the userinfo endpoint cannot be found');
  const response = await fetch(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`, { signal: AbortSignal.timeout(3_000) });
  if (!response.ok) throw new Error(`the issuer's discovery document answered ${response.status}`);
  const { userinfo_endpoint: endpoint } = (await response.json()) as { userinfo_endpoint?: unknown };
  if (typeof endpoint !== 'string') throw new Error('the issuer names no userinfo endpoint');
  return endpoint;
}
