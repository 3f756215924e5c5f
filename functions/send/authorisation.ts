/**
 * Who is calling, and may they send in this Organization from these addresses
 * (CONTRACT section 3). The key is only ever handled as its hash past `readBearerToken`
 * (functions/shared/http/bearer-token.ts).
 */
import { hashApiKey } from '../shared/domain/api-keys';
import { isAllowedSender } from '../shared/domain/sender-identity';
import type { FieldProblem } from '../shared/http/problems';
import { InvalidCredentialsProblem, OrganizationForbiddenProblem, SenderForbiddenProblem } from '../shared/http/problems';
import type { AccessLookup, AccessStore, OrganizationAccess } from '../shared/store/ports';
import type { ValidMessage } from './validation';

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
    .filter(({ from }) => !isAllowedSender(from, organization.senders))
    .map(({ index, from }) => ({
      pointer: `/Messages/${index}/From`,
      detail: `${from.ascii} is not an allowed sender identity of this Organization`,
    }));
  if (refused.length > 0) throw new SenderForbiddenProblem(refused);
}
