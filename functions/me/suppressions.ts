/**
 * `GET` and `DELETE /v1.2/me/suppressions`: the suppression lists of the signed-in user's
 * Organizations, and taking an address off one (CONTRACT section 9), by the same rules and the
 * same store as the admin command line's `suppression list` and `suppression remove`.
 */
import { parseEmailAddress } from '../shared/domain/email-address';
import type { DynamoDbSuppressionStore } from '../shared/store/dynamodb-suppression-store';
import { withStorageFaults } from '../shared/store/storage-errors';
import type { MemberOrganization } from './organizations';
import { memberOrganization, perOrganization } from './organizations';
import { InvalidParameterProblem, NotSuppressedProblem } from './problems';

export interface SuppressionView {
  readonly OrganizationId: string;
  readonly Address: string;
  readonly Reason: 'Bounce' | 'Complaint';
  readonly At: string;
}

type Query = Readonly<Record<string, string | undefined>>;
type Store = Pick<DynamoDbSuppressionStore, 'list' | 'remove'>;

/** Every member Organization's list, or the one named; by Organization, then address. */
export async function listSuppressions(member: readonly MemberOrganization[], query: Query, store: Store): Promise<{ Suppressions: SuppressionView[] }> {
  const lists = await perOrganization(member, query, (organizationId) => store.list(organizationId));
  return {
    Suppressions: lists.flatMap(({ organization, items }) =>
      items.sort((a, b) => (a.address < b.address ? -1 : 1)).map(({ address, reason, at }) => ({ OrganizationId: organization.id, Address: address, Reason: reason, At: at })),
    ),
  };
}

export async function removeSuppression(member: readonly MemberOrganization[], query: Query, store: Store): Promise<void> {
  const organization = memberOrganization(member, query.organizationId);
  const address = parseEmailAddress(query.address?.trim() ?? '');
  if (!address) throw new InvalidParameterProblem('address', 'must be the suppressed e-mail address, such as ada@example.com');
  const stored = address.ascii.toLowerCase();
  if (!(await withStorageFaults(() => store.remove(organization.id, stored)))) throw new NotSuppressedProblem();
}
