/**
 * May this caller send these messages (CONTRACT section 3): the key and membership rules are
 * every API-key endpoint's (functions/shared/auth/caller.ts); the sender rule is the send
 * endpoint's own.
 */
import type { KeyPolicy } from '../shared/domain/key-policy';
import { allowsSender } from '../shared/domain/key-policy';
import { isAllowedSender } from '../shared/domain/sender-identity';
import type { FieldProblem } from '../shared/http/problems';
import { OrganizationPausedProblem, SenderForbiddenProblem } from '../shared/http/problems';
import type { OrganizationAccess } from '../shared/store/ports';
import type { ValidMessage } from '../shared/mail/valid-message';

export type { Caller } from '../shared/auth/caller';
export { authenticate, authoriseOrganization } from '../shared/auth/caller';

/**
 * Every message's From must be an allowed domain or exact address of the Organization and, when
 * the caller's key is limited to some senders (docs/keys.md), one of those too.
 */
export function authoriseSenders(messages: readonly ValidMessage[], organization: OrganizationAccess, key: KeyPolicy = {}): void {
  const refused: FieldProblem[] = messages.flatMap(({ index, from }) => {
    const pointer = `/Messages/${index}/From`;
    if (!isAllowedSender(from, organization.senders)) return [{ pointer, detail: `${from.ascii} is not an allowed sender identity of this Organization` }];
    if (!allowsSender(key, from)) return [{ pointer, detail: `${from.ascii} is not among the senders this API key may use` }];
    return [];
  });
  if (refused.length > 0) throw new SenderForbiddenProblem(refused);
}

/** A paused Organization sends nothing (CONTRACT section 11 item 3); its status requests still work. */
export function authoriseSending(organization: OrganizationAccess): void {
  if (organization.paused) throw new OrganizationPausedProblem(organization.paused);
}
