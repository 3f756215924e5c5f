/**
 * What the settings API does for the signed-in user (CONTRACT section 9): say who they are,
 * which Organizations they belong to and what key they have, and generate, rotate or revoke that
 * key, by the same rules as the admin command line (one implementation: `DynamoDbKeyStore`).
 * Plain functions; `handler.ts` is their HTTP face.
 */
import type { DynamoDbKeyStore, KeyOptions, StoredUser } from '../shared/store/dynamodb-key-store';
import { KeyPolicyError } from '../shared/domain/key-policy';
import { ValidationProblem } from '../shared/http/problems';
import type { KeySummary } from '../shared/store/records';
import { RecordConflictError, RecordNotFoundError } from '../shared/store/records';
import type { IssuedKey } from '../shared/store/records';
import { isTestApiKey, maskApiKey, keyLastFour } from '../shared/domain/api-keys';
import { withStorageFaults } from '../shared/store/storage-errors';
import type { Identity } from './identity';
import type { MemberOrganization, OrganizationView } from './organizations';
import { KeyChangedProblem, KeyExistsProblem, NoAccessProblem, NoKeyProblem } from './problems';

export interface MeView {
  readonly Email: string;
  readonly Organizations: readonly OrganizationView[];
  /** `Revealable`: whether `GET /v1.2/me/api-key` can show it again (kept sealed, and reveal on). */
  readonly ApiKey: (KeyView & { readonly Revealable: boolean }) | null;
}

/** What the page shows of a key: masked, and what it may do (docs/keys.md). */
export interface KeyView {
  readonly Masked: string;
  readonly CreatedAt: string;
  /** Absent: every scope. */
  readonly Scopes?: readonly string[];
  /** Absent: every sender identity of the Organization. */
  readonly Senders?: readonly string[];
  readonly ExpiresAt?: string;
  /** The hour of its last use; absent: never used. */
  readonly LastUsedAt?: string;
  readonly Test: boolean;
}

export function keyView(summary: KeySummary): KeyView {
  const { policy } = summary;
  return {
    Masked: summary.masked,
    CreatedAt: summary.createdAt,
    ...(policy.scopes && { Scopes: policy.scopes }),
    ...(policy.senders && { Senders: policy.senders }),
    ...(policy.expiresAt && { ExpiresAt: policy.expiresAt }),
    ...(summary.lastUsedAt && { LastUsedAt: summary.lastUsedAt }),
    Test: summary.test,
  };
}

/** The plain key: only in the answer to generate, rotate and the owner's `GET /v1.2/me/api-key`. */
export interface NewKeyView {
  readonly Key: string;
  readonly Masked: string;
  readonly CreatedAt: string;
}

/** The service user with the signed-in, verified e-mail; anyone else gets 403 and nothing more. */
export async function userOf(identity: Identity, keys: DynamoDbKeyStore): Promise<StoredUser> {
  const user = await withStorageFaults(() => keys.findUserByEmail(identity.email));
  if (!user) throw new NoAccessProblem();
  return user;
}

/** The user's Organizations, checked against each one's own member set. */
export function memberOrganizations(user: StoredUser, keys: DynamoDbKeyStore): Promise<MemberOrganization[]> {
  return withStorageFaults(() => keys.organizationsOf(user));
}

/** `organizations`: the views of organizations.ts; `revealable`: whether reveal is on. */
export async function describe(user: StoredUser, keys: DynamoDbKeyStore, organizations: readonly OrganizationView[], revealable: boolean): Promise<MeView> {
  const summary = await withStorageFaults(() => keys.summary(user));
  return {
    // Found by its e-mail address (userOf): a service user, which has none, never gets here.
    Email: user.email ?? '',
    Organizations: organizations,
    ApiKey: summary ? { ...keyView(summary), Revealable: revealable && user.sealedKey !== undefined } : null,
  };
}

export async function generateKey(user: StoredUser, keys: DynamoDbKeyStore, options: KeyOptions): Promise<NewKeyView> {
  if (user.keyHash) throw new KeyExistsProblem();
  try {
    return shown(await withStorageFaults(() => keys.generate(user.id, options)));
  } catch (error) {
    // Another tab or the operator made one in the meantime.
    if (error instanceof RecordConflictError) throw new KeyExistsProblem({ cause: error });
    throw invalidSenders(error);
  }
}

export async function rotateKey(user: StoredUser, keys: DynamoDbKeyStore, options: KeyOptions): Promise<NewKeyView> {
  if (!user.keyHash) throw new NoKeyProblem();
  try {
    return shown(await withStorageFaults(() => keys.rotate(user.id, options)));
  } catch (error) {
    if (error instanceof RecordNotFoundError) throw new NoKeyProblem({ cause: error });
    if (error instanceof RecordConflictError) throw new KeyChangedProblem({ cause: error });
    throw invalidSenders(error);
  }
}

/** The key store refuses senders outside the user's Organizations: a 400 on the field, nothing changed. */
function invalidSenders(error: unknown): unknown {
  return error instanceof KeyPolicyError ? new ValidationProblem([{ pointer: '/Senders', detail: error.message }], { cause: error }) : error;
}

/** Revoking is idempotent: with no key, the user already has what they asked for. */
export async function revokeKey(user: StoredUser, keys: DynamoDbKeyStore): Promise<void> {
  if (!user.keyHash) return;
  try {
    await withStorageFaults(() => keys.revoke(user.id));
  } catch (error) {
    if (error instanceof RecordNotFoundError) return;
    if (error instanceof RecordConflictError) throw new KeyChangedProblem({ cause: error });
    throw error;
  }
}

function shown(issued: IssuedKey): NewKeyView {
  return { Key: issued.key, Masked: maskApiKey(keyLastFour(issued.key), isTestApiKey(issued.key)), CreatedAt: issued.createdAt };
}
