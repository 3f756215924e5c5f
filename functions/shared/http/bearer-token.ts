/**
 * The API key from the Authorization header (RFC 6750), or the 401 that says what is wrong.
 */
import { isWellFormedApiKey } from '../domain/api-keys';
import { InvalidCredentialsProblem, MissingCredentialsProblem } from './problems';

// RFC 6750 section 2.1: the scheme is case-insensitive (RFC 7235), then one or more spaces.
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** The API key from the Authorization header, or a 401 saying what is wrong. */
export function readBearerToken(authorization: string | undefined): string {
  if (authorization === undefined) throw new MissingCredentialsProblem();
  const token = BEARER.exec(authorization)?.[1];
  // A token of the wrong shape cannot be a key of ours: refuse it without a database read.
  if (token === undefined || !isWellFormedApiKey(token)) throw new InvalidCredentialsProblem();
  return token;
}

