/**
 * Who is calling, and may they send in this Organization from these addresses
 * (CONTRACT section 3). The key is only ever handled as its hash past `readBearerToken`.
 */
import { hashApiKey, isWellFormedApiKey } from '../shared/api-keys';
import type { FieldProblem } from '../shared/errors';
import {
  InvalidCredentialsProblem,
  MissingCredentialsProblem,
  OrganizationForbiddenProblem,
  SenderForbiddenProblem,
} from '../shared/errors';
import type { AccessLookup, AccessStore, OrganizationAccess } from '../shared/store/ports';
import type { ValidMessage } from './validation';

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

export interface Caller {
  readonly userId: string;
  readonly access: AccessLookup;
}

/** Resolves the key (and the named Organization, in the same round trip) to the calling user. */
export async function authenticate(apiKey: string, organizationId: string | undefined, store: AccessStore): Promise<Caller> {
  const access = await store.lookup(hashApiKey(apiKey), organizationId);
  if (!access.key) throw new InvalidCredentialsProblem();
  return { userId: access.key.userId, access };
}

/** The Organization, if the caller is a member; unknown and not-a-member are the same 403. */
export function authoriseOrganization(caller: Caller): OrganizationAccess {
  const organization = caller.access.organization;
  if (!organization || !organization.members.has(caller.userId)) throw new OrganizationForbiddenProblem();
  return organization;
}

/** Every message's From must be an allowed domain or exact address of the Organization. */
export function authoriseSenders(messages: readonly ValidMessage[], organization: OrganizationAccess): void {
  const refused: FieldProblem[] = messages
    .filter(({ from }) => !organization.senders.has(from.domain) && !organization.senders.has(from.ascii.toLowerCase()))
    .map(({ index, from }) => ({
      pointer: `/Messages/${index}/From`,
      detail: `${from.ascii} is not an allowed sender identity of this Organization`,
    }));
  if (refused.length > 0) throw new SenderForbiddenProblem(refused);
}
