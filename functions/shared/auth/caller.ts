/**
 * Who is calling, and may they act in this Organization (CONTRACT section 3): the rules every
 * API-key endpoint shares (send, status). The key is only ever handled as its hash past
 * `readBearerToken` (functions/shared/http/bearer-token.ts).
 */
import { hashApiKey } from '../domain/api-keys';
import { InvalidCredentialsProblem, OrganizationForbiddenProblem } from '../http/problems';
import type { AccessStore, OrganizationAccess } from '../store/ports';

export interface Caller {
  readonly userId: string;
}

/**
 * Resolves the key to its user, before the body is even parsed: an unknown key costs one read
 * (or none, cached) and gets 401 whatever the body holds.
 */
export async function authenticate(apiKey: string, store: AccessStore): Promise<Caller> {
  const { key } = await store.lookup(hashApiKey(apiKey), undefined);
  if (!key) throw new InvalidCredentialsProblem();
  return { userId: key.userId };
}

/**
 * The Organization, if the caller is a member; unknown and not-a-member are the same 403. Only
 * a known key gets this far, so nobody without one can learn whether an Organization exists.
 */
export async function authoriseOrganization(caller: Caller, organizationId: string, store: AccessStore): Promise<OrganizationAccess> {
  // With the caller named, a cache answers a refusal by reading again: every 403 costs the same.
  const { organization } = await store.lookup(undefined, organizationId, { memberId: caller.userId });
  if (!organization || !organization.members.has(caller.userId)) throw new OrganizationForbiddenProblem();
  return organization;
}
