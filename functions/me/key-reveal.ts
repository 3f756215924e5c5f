/**
 * The signed-in user's own key, shown again (CONTRACT section 3, item 2 and section 9). With
 * reveal on, generate and rotate keep the new key sealed beside its hash, bound to its user (KMS
 * encryption context `userId` in AWS, the local sealing key locally); `GET /v1.2/me/api-key`
 * opens it for that user only. The send path never holds a sealer, and only the settings API's
 * role may decrypt with that context (infra/aws/settings-functions.ts).
 *
 * A reveal is logged as an event (who, never the key). A sealed key that does not open, or opens
 * to a key whose hash is not the user's (a stale copy), is answered as not revealable: rotating is
 * then the way out, never a wrong key.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { InvalidCiphertextException } from '@aws-sdk/client-kms';
import { hashApiKey, maskApiKey } from '../shared/domain/api-keys';
import type { SealKey, StoredUser } from '../shared/store/dynamodb-key-store';
import type { SecretSealer } from '../shared/webhooks/sealing';
import { SealedSecretError } from '../shared/webhooks/sealing';
import type { NewKeyView } from './me';
import { KeyNotRevealableProblem, NoKeyProblem } from './problems';

/** The seal step generate and rotate hand the key store; none when reveal is off. */
export function sealingWith(sealer: SecretSealer | undefined): SealKey | undefined {
  return sealer && ((key, userId) => sealer.seal(key, userId));
}

export async function revealKey(user: StoredUser, sealer: SecretSealer | undefined, observe: { logger: Logger; metrics: Metrics }): Promise<NewKeyView> {
  if (!user.keyHash || !user.keyLastFour || !user.keyCreatedAt) throw new NoKeyProblem({ action: 'show' });
  if (!sealer || !user.sealedKey) throw new KeyNotRevealableProblem();
  let key: string;
  try {
    key = await sealer.open(user.sealedKey, user.id);
  } catch (error) {
    // KMS refuses a ciphertext of another key or another user the same way.
    if (!(error instanceof SealedSecretError) && !(error instanceof InvalidCiphertextException)) throw error;
    observe.logger.warn('a sealed API key did not open (another sealing key?); answered as not revealable', { userId: user.id });
    throw new KeyNotRevealableProblem({ cause: error });
  }
  if (hashApiKey(key) !== user.keyHash) throw new KeyNotRevealableProblem();
  observe.logger.info('api key revealed', { event: 'ApiKeyRevealed', userId: user.id });
  observe.metrics.addMetric('ApiKeyReveals', MetricUnit.Count, 1);
  return { Key: key, Masked: maskApiKey(user.keyLastFour, user.keyTest), CreatedAt: user.keyCreatedAt };
}
