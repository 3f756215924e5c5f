/** A user item as the key store reads it: the user, its Organizations and the one key it holds. */
import type { KeyPolicy } from '../domain/key-policy';
import { readKeyPolicy } from '../domain/key-policy';
import type { User } from './records';

export interface StoredUser extends User {
  readonly keyHash?: string;
  readonly keyLastFour?: string;
  readonly keyCreatedAt?: string;
  /** The key sealed for its owner (functions/me/key-reveal.ts); absent when it was made with reveal off or before it. */
  readonly sealedKey?: string;
  /** What the key may do (domain/key-policy.ts); empty: everything. */
  readonly keyPolicy?: KeyPolicy;
  /** A test-mode key (`tme_test_…`): its messages never reach Amazon SES. */
  readonly keyTest?: boolean;
  /** Organizations the user is a member of (kept beside the Organization's own member set). */
  readonly organizations: readonly string[];
  /** A service user's one Organization, the one it was made in: it may be a member of no other, even once removed from it. */
  readonly serviceOrganization?: string;
}

export function toUser(id: string, item: Record<string, unknown>): StoredUser {
  return {
    id,
    ...(typeof item.email === 'string' && { email: item.email }),
    ...(typeof item.serviceName === 'string' && { serviceName: item.serviceName }),
    organizations: item.organizations instanceof Set ? [...(item.organizations as Set<string>)].sort() : [],
    ...(typeof item.serviceOrganization === 'string' && { serviceOrganization: item.serviceOrganization }),
    ...(typeof item.keyHash === 'string' && {
      keyHash: item.keyHash,
      keyLastFour: String(item.keyLastFour),
      keyCreatedAt: String(item.keyCreatedAt),
      ...(typeof item.sealedKey === 'string' && { sealedKey: item.sealedKey }),
      keyPolicy: readKeyPolicy(item),
      ...(item.keyTest === true && { keyTest: true }),
    }),
  };
}
