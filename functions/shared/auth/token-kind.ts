/**
 * Whether a signed, current JWT from the deployment's OpenID provider is an *access* token, the
 * only kind that opens the settings API (CONTRACT section 9). API Gateway's JWT authorizer (and
 * the local gateway, which plays it) checks signature, issuer, audience and expiry, and an ID
 * token passes all four: its `aud` is the page's client, the very audience the authorizer wants.
 * So the kind is decided here, from what each issuer puts in its tokens:
 *
 * 1. `token_use` claim (Amazon Cognito): `access` is an access token; anything else (`id`) is not.
 * 2. `typ` header `at+jwt` (RFC 9068, JWT access tokens; the local oidc-provider, and most
 *    issuers that follow the RFC): an access token.
 * 3. Otherwise a token carrying what only ID tokens carry is refused: `nonce`, `at_hash`,
 *    `c_hash` (OpenID Connect Core 2 and 3.1.3.6; an ID token from the code flow's token endpoint
 *    carries `at_hash` at oidc-provider and Cognito, and `nonce` whenever the sign-in asked for
 *    one, as the settings page does), or Keycloak's `typ` claim `ID`.
 * 4. A token with none of these marks is taken as an access token: an issuer following neither
 *    convention still works, and its ID tokens are still refused by rule 3.
 */

export type TokenClaims = Readonly<Record<string, unknown>>;

const ID_TOKEN_ONLY_CLAIMS = ['nonce', 'at_hash', 'c_hash'] as const;

/** The decoded JOSE header of a compact JWT, or undefined when it is not one. */
export function jwtHeader(token: string | undefined): Record<string, unknown> | undefined {
  const encoded = token?.split('.')[0];
  if (!encoded || token?.split('.').length !== 3) return undefined;
  try {
    const header: unknown = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'));
    return typeof header === 'object' && header !== null && !Array.isArray(header) ? (header as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export function isAccessToken(claims: TokenClaims, header: Readonly<Record<string, unknown>> | undefined): boolean {
  if (claims.token_use !== undefined) return claims.token_use === 'access';
  const typ = typeof header?.typ === 'string' ? header.typ.toLowerCase() : '';
  if (typ === 'at+jwt' || typ === 'application/at+jwt') return true;
  if (typeof claims.typ === 'string' && claims.typ.toLowerCase() === 'id') return false;
  return !ID_TOKEN_ONLY_CLAIMS.some((claim) => claims[claim] !== undefined);
}
