/**
 * The local stand-in for an API Gateway JWT authorizer: the token from `Authorization`
 * (`Bearer <JWT>`), its signature against the issuer's JWKS, the issuer, the audience (`aud`, or
 * `client_id` as Cognito access tokens carry it), and the time claims (`exp` required), as API Gateway checks them.
 * The claims it hands on are those the function would get in AWS.
 */
import { createRemoteJWKSet, jwtVerify } from 'jose';
import type { JWTPayload } from 'jose';
import { isAccessToken } from '../../../functions/shared/auth/token-kind';
import type { JwtAuthorization, JwtAuthorizer } from './routing';

export interface JwtAuthorizerOptions {
  readonly issuer: string;
  /** Accepted audiences: the token's `aud` or `client_id` must be one of them. */
  readonly audience: readonly string[];
  /** Defaults to the issuer's discovery document's `jwks_uri`, as API Gateway finds it. */
  readonly jwksUri?: string;
}

const BEARER = /^Bearer\s+([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/i;

/** API Gateway hands claims on as strings, numbers and booleans; arrays keep their entries. */
function flatten(payload: JWTPayload): JwtAuthorization['claims'] {
  const claims: Record<string, string | number | boolean | string[]> = {};
  for (const [name, value] of Object.entries(payload)) {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') claims[name] = value;
    else if (Array.isArray(value)) claims[name] = value.map(String);
    else if (value !== undefined && value !== null) claims[name] = JSON.stringify(value);
  }
  return claims;
}

export function createJwtAuthorizer(options: JwtAuthorizerOptions): JwtAuthorizer {
  let jwks: ReturnType<typeof createRemoteJWKSet> | undefined;
  const keys = async () => {
    if (!jwks) {
      const uri = options.jwksUri ?? (await discoverJwksUri(options.issuer));
      jwks = createRemoteJWKSet(new URL(uri));
    }
    return jwks;
  };

  return async function authorize(authorization) {
    const token = BEARER.exec(authorization?.trim() ?? '')?.[1];
    if (!token) return undefined;
    try {
      // API Gateway accepts RSA signatures only, and refuses a token without `exp` (one that
      // would never expire); so does this check.
      const { payload, protectedHeader } = await jwtVerify(token, await keys(), { issuer: options.issuer, algorithms: ['RS256', 'RS384', 'RS512'], requiredClaims: ['exp'] });
      // API Gateway would let an ID token through to the function, which refuses it; refusing it
      // here too gives the same 401 without a call (functions/shared/auth/token-kind.ts).
      if (!isAccessToken(payload, protectedHeader as unknown as Record<string, unknown>)) return undefined;
      const audiences = [payload.aud ?? [], payload.client_id ?? []].flat().map(String);
      if (!audiences.some((audience) => options.audience.includes(audience))) return undefined;
      const scope = typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : null;
      return { claims: flatten(payload), scopes: scope };
    } catch {
      return undefined;
    }
  };
}

async function discoverJwksUri(issuer: string): Promise<string> {
  const response = await fetch(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`);
  if (!response.ok) throw new Error(`the issuer's discovery document answered ${response.status}`);
  const { jwks_uri: uri } = (await response.json()) as { jwks_uri?: unknown };
  if (typeof uri !== 'string') throw new Error('the issuer\'s discovery document names no jwks_uri');
  return uri;
}
