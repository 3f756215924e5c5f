/**
 * Who is calling, and may they send in this Organization from these addresses
 * (CONTRACT section 3). The key is only ever handled as its hash past `readBearerToken`
 * (functions/shared/http/bearer-token.ts).
 */
import { hashApiKey } from '../shared/domain/api-keys';
import { isAllowedSender } from '../shared/domain/sender-identity';
import type { FieldProblem } from '../shared/http/problems';
import { InvalidCredentialsProblem, OrganizationForbiddenProblem, SenderForbiddenProblem } from '../shared/http/problems';
import type { AccessStore, OrganizationAccess } from '../shared/store/ports';
import type { ValidMessage } from './validation';

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
  const { organization } = await store.lookup(undefined, organizationId);
  if (!organization || !organization.members.has(caller.userId)) throw new OrganizationForbiddenProblem();
  return organization;
}

/** Every message's From must be an allowed domain or exact address of the Organization. */
export function authoriseSenders(messages: readonly ValidMessage[], organization: OrganizationAccess): void {
  const refused: FieldProblem[] = messages
    .filter(({ from }) => !isAllowedSender(from, organization.senders))
    .map(({ index, from }) => ({
      pointer: `/Messages/${index}/From`,
      detail: `${from.ascii} is not an allowed sender identity of this Organization`,
    }));
  if (refused.length > 0) throw new SenderForbiddenProblem(refused);
}
