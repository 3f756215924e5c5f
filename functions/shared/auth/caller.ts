/**
 * Who is calling, and may they act in this Organization (CONTRACT section 3): the rules every
 * API-key endpoint shares (send, status, cancel). The key is only ever handled as its hash past
 * `readBearerToken` (functions/shared/http/bearer-token.ts).
 */
import { hashApiKey, isTestApiKey } from '../domain/api-keys';
import type { KeyPolicy, KeyScope } from '../domain/key-policy';
import { allowsScope, isExpired } from '../domain/key-policy';
import { ExpiredKeyProblem, InsufficientScopeProblem, InvalidCredentialsProblem, OrganizationForbiddenProblem } from '../http/problems';
import type { AccessStore, OrganizationAccess } from '../store/ports';

export interface Caller {
  readonly userId: string;
  /** What the caller's key may do (docs/keys.md); empty: everything. */
  readonly policy: KeyPolicy;
  /** A test-mode key: authorised as live, but nothing it sends reaches Amazon SES. */
  readonly test: boolean;
  /** The hash of the key the caller authenticated with: what a schedule it makes belongs to (CONTRACT section 13 item 5). */
  readonly keyHash?: string;
}

/** The hour a use is recorded under: ISO, minutes and seconds zero. */
export function useHour(now: number): string {
  return `${new Date(now).toISOString().slice(0, 13)}:00:00Z`;
}

/**
 * Resolves the key to its user, before the body is even parsed: an unknown key costs one read
 * (or none, cached) and gets 401 whatever the body holds, an expired one a 401 that says so.
 * The first use of a key in each hour is recorded (`key show` prints it), a write the cached
 * record then remembers; failing to record it never fails the call.
 */
export async function authenticate(apiKey: string, store: AccessStore, now: number = Date.now()): Promise<Caller> {
  const keyHash = hashApiKey(apiKey);
  const { key } = await store.lookup(keyHash, undefined);
  if (!key) throw new InvalidCredentialsProblem();
  if (isExpired(key.policy, now)) throw new ExpiredKeyProblem(key.policy.expiresAt as string);
  const hour = useHour(now);
  if (key.lastUsedAt === undefined || key.lastUsedAt < hour) await store.recordUse(keyHash, hour).catch(() => undefined);
  return { userId: key.userId, policy: key.policy, test: isTestApiKey(apiKey), keyHash };
}

/** A call outside the key's scopes is refused before anything is done (403, RFC 6750 `insufficient_scope`). */
export function requireScope(caller: Caller, scope: KeyScope): void {
  if (!allowsScope(caller.policy, scope)) throw new InsufficientScopeProblem(scope);
}

/**
 * The Organization, if the caller is a member; unknown and not-a-member are the same 403. Only
 * a known key gets this far, so nobody without one can learn whether an Organization exists.
 */
export async function authoriseOrganization(caller: Pick<Caller, 'userId'>, organizationId: string, store: AccessStore): Promise<OrganizationAccess> {
  // With the caller named, a cache answers a refusal by reading again: every 403 costs the same.
  const { organization } = await store.lookup(undefined, organizationId, { memberId: caller.userId });
  if (!organization || !organization.members.has(caller.userId)) throw new OrganizationForbiddenProblem();
  return organization;
}
