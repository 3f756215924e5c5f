/**
 * What the settings API does for the signed-in user (CONTRACT section 9): say who they are,
 * which Organizations they belong to and what key they have, and generate, rotate or revoke that
 * key, by the same rules as the admin command line (one implementation: `DynamoDbKeyStore`).
 * Plain functions; `handler.ts` is their HTTP face.
 */
import { reputationView, summarise } from '../shared/domain/reputation';
import type { DynamoDbKeyStore, StoredUser } from '../shared/store/dynamodb-key-store';
import type { DynamoDbReputationStore } from '../shared/store/dynamodb-reputation-store';
import { RecordConflictError, RecordNotFoundError } from '../shared/store/records';
import type { IssuedKey } from '../shared/store/records';
import { maskApiKey, keyLastFour } from '../shared/domain/api-keys';
import { withStorageFaults } from '../shared/store/storage-errors';
import type { Identity } from './identity';
import { KeyChangedProblem, KeyExistsProblem, NoAccessProblem, NoKeyProblem } from './problems';

export interface MeView {
  readonly Email: string;
  readonly Organizations: readonly { readonly OrganizationId: string; readonly Name: string; readonly Reputation: ReturnType<typeof reputationView> }[];
  readonly ApiKey: { readonly Masked: string; readonly CreatedAt: string } | null;
}

/** The plain key, shown once: only in the answer to generate and rotate. */
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

/** `now`: the clock the reputation window ends at. */
export async function describe(user: StoredUser, keys: DynamoDbKeyStore, reputations: Pick<DynamoDbReputationStore, 'readMany'>, now: number): Promise<MeView> {
  const organizations = await withStorageFaults(() => keys.organizationsOf(user));
  const byId = organizations.length === 0 ? new Map<string, never>() : await withStorageFaults(() => reputations.readMany(organizations.map(({ id }) => id), now));
  const summary = keys.summary(user);
  return {
    Email: user.email,
    Organizations: organizations.map(({ id, name, paused }) => ({ OrganizationId: id, Name: name, Reputation: reputationView(byId.get(id) ?? summarise(() => undefined, now), paused) })),
    ApiKey: summary ? { Masked: summary.masked, CreatedAt: summary.createdAt } : null,
  };
}

export async function generateKey(user: StoredUser, keys: DynamoDbKeyStore): Promise<NewKeyView> {
  if (user.keyHash) throw new KeyExistsProblem();
  try {
    return shown(await withStorageFaults(() => keys.generate(user.id)));
  } catch (error) {
    // Another tab or the operator made one in the meantime.
    if (error instanceof RecordConflictError) throw new KeyExistsProblem({ cause: error });
    throw error;
  }
}

export async function rotateKey(user: StoredUser, keys: DynamoDbKeyStore): Promise<NewKeyView> {
  if (!user.keyHash) throw new NoKeyProblem();
  try {
    return shown(await withStorageFaults(() => keys.rotate(user.id)));
  } catch (error) {
    if (error instanceof RecordNotFoundError) throw new NoKeyProblem({ cause: error });
    if (error instanceof RecordConflictError) throw new KeyChangedProblem({ cause: error });
    throw error;
  }
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
  return { Key: issued.key, Masked: maskApiKey(keyLastFour(issued.key)), CreatedAt: issued.createdAt };
}
