/**
 * The settings API's own answers (CONTRACT section 9), beside the shared ones in
 * functions/shared/http/problems.ts. The local gateway uses `InvalidAccessTokenProblem` for a
 * token it refuses, as API Gateway's JWT authorizer refuses it in AWS.
 */
import { AUTH_REALM, HttpProblem } from '../shared/http/problems';

/**
 * The request does not carry a valid, current access token from the deployment's OpenID
 * provider (401); an API key is refused here too. `missing`: it carries no `Authorization` at
 * all, which RFC 6750 (section 3.1) answers with the realm alone, no error code.
 */
export class InvalidAccessTokenProblem extends HttpProblem {
  constructor(options?: ErrorOptions & { readonly missing?: boolean }) {
    super(401, 'invalid-access-token', 'Sign-in required', {
      ...options,
      detail: 'Send the access token of a current sign-in as "Authorization: Bearer <JWT>"; API keys are not accepted here.',
      headers: { 'WWW-Authenticate': options?.missing ? `Bearer realm="${AUTH_REALM}"` : `Bearer realm="${AUTH_REALM}", error="invalid_token"` },
    });
    this.name = 'InvalidAccessTokenProblem';
  }
}

/** The signed-in e-mail belongs to no user of the service, or is not verified (403). */
export class NoAccessProblem extends HttpProblem {
  constructor(options?: ErrorOptions) {
    super(403, 'no-access', 'No access', {
      ...options,
      detail: 'This sign-in has no access to the email API: no user of the service has its verified e-mail address. Ask your operator to add you.',
    });
    this.name = 'NoAccessProblem';
  }
}

/** Generate was asked for while the user already has a key (409); rotate replaces it. */
export class KeyExistsProblem extends HttpProblem {
  constructor(options?: ErrorOptions) {
    super(409, 'key-exists', 'You already have an API key', {
      ...options,
      detail: 'Each user has at most one API key. Rotate it (POST /v1.2/me/api-key/rotate) to replace it.',
    });
    this.name = 'KeyExistsProblem';
  }
}

/** Rotate (or show) was asked for while the user has no key (404); generate creates one. */
export class NoKeyProblem extends HttpProblem {
  constructor(options?: ErrorOptions & { readonly action?: 'rotate' | 'show' }) {
    super(404, 'no-key', 'You have no API key', {
      ...options,
      detail: `There is no key to ${options?.action ?? 'rotate'}. Generate one (POST /v1.2/me/api-key).`,
    });
    this.name = 'NoKeyProblem';
  }
}

/** The OpenID provider could not say who the token belongs to (503); nothing was changed. */
export class IdentityProviderUnavailableProblem extends HttpProblem {
  constructor(options?: ErrorOptions) {
    super(503, 'identity-provider-unavailable', 'Sign-in provider unavailable', {
      ...options,
      detail: 'The OpenID provider could not confirm the signed-in e-mail address. Nothing was changed; retry in a moment.',
      headers: { 'Retry-After': '5' },
    });
    this.name = 'IdentityProviderUnavailableProblem';
  }
}

/** The key changed while it was being rotated, by another tab or the operator (409). */
export class KeyChangedProblem extends HttpProblem {
  constructor(options?: ErrorOptions) {
    super(409, 'key-changed', 'Your API key changed meanwhile', {
      ...options,
      detail: 'Your key was changed by another request while this one ran. Reload to see it, then try again.',
    });
    this.name = 'KeyChangedProblem';
  }
}

/**
 * The key cannot be shown again (409): it was made while reveal was off or before keys were kept
 * sealed, or reveal is off now (CONTRACT section 3, item 2). Rotating gives a new one.
 */
export class KeyNotRevealableProblem extends HttpProblem {
  constructor(options?: ErrorOptions) {
    super(409, 'key-not-revealable', 'Your API key cannot be shown again', {
      ...options,
      detail: 'Only the hash of this key is kept, so it cannot be shown again. Rotate it (POST /v1.2/me/api-key/rotate) to get a new key.',
    });
    this.name = 'KeyNotRevealableProblem';
  }
}

/** A query parameter is malformed (400); `errors` names it as a JSON pointer into the query. */
export class InvalidParameterProblem extends HttpProblem {
  constructor(parameter: string, rule: string, options?: ErrorOptions) {
    super(400, 'invalid-parameter', 'Invalid query parameter', {
      ...options,
      detail: `The query parameter "${parameter}" ${rule}.`,
      errors: [{ pointer: `/${parameter}`, detail: rule }],
    });
    this.name = 'InvalidParameterProblem';
  }
}

/** The address to remove is not on the Organization's suppression list (404). */
export class NotSuppressedProblem extends HttpProblem {
  constructor(options?: ErrorOptions) {
    super(404, 'not-suppressed', 'Not on the suppression list', {
      ...options,
      detail: 'That address is not on the Organization\'s suppression list (it may have been removed already).',
    });
    this.name = 'NotSuppressedProblem';
  }
}
