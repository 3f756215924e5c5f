/**
 * API keys sealed for their owner (functions/me/key-reveal.ts, webhooks/sealing.ts with the
 * `userId` binding): a sealed key opens for its user only, never as a webhook secret of the same
 * id; KMS is asked with the `userId` encryption context the IAM condition names; and a reveal
 * refuses a key that is not sealed, does not open, or is not the user's current key.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { DecryptCommand, EncryptCommand, InvalidCiphertextException, KMSClient } from '@aws-sdk/client-kms';
import { mockClient } from 'aws-sdk-client-mock';
import { revealKey } from '../../functions/me/key-reveal';
import { KeyNotRevealableProblem, NoKeyProblem } from '../../functions/me/problems';
import { generateApiKey, hashApiKey, keyLastFour } from '../../functions/shared/domain/api-keys';
import { createLogger, createMetrics } from '../../functions/shared/runtime/observability';
import type { StoredUser } from '../../functions/shared/store/dynamodb-key-store';
import { AesGcmSealer, KmsSealer, SealedSecretError } from '../../functions/shared/webhooks/sealing';

const USER = '9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d';
const OTHER = '1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed';
const localKey = async () => Buffer.alloc(32, 7);
const observe = { logger: createLogger(), metrics: createMetrics() };
const kms = mockClient(KMSClient);
afterEach(() => {
  kms.reset();
});

function userWith(key: string, sealedKey?: string): StoredUser {
  return { id: USER, email: 'ada@example.com', organizations: [], keyHash: hashApiKey(key), keyLastFour: keyLastFour(key), keyCreatedAt: '2026-11-23T10:00:00.000Z', ...(sealedKey && { sealedKey }) };
}

describe('sealing bound to a user', () => {
  it('opens for its user only, and never as a webhook secret bound to an Organization of the same id', async () => {
    const sealer = new AesGcmSealer(localKey, 'userId');
    const sealed = await sealer.seal('tme_secret', USER);
    await expect(sealer.open(sealed, USER)).resolves.toBe('tme_secret');
    await expect(sealer.open(sealed, OTHER)).rejects.toBeInstanceOf(SealedSecretError);
    await expect(new AesGcmSealer(localKey).open(sealed, USER)).rejects.toBeInstanceOf(SealedSecretError);
  });

  it('asks KMS with the encryption context {userId}, as the settings role\'s IAM condition requires', async () => {
    kms.on(EncryptCommand).resolves({ CiphertextBlob: Buffer.from('blob') });
    kms.on(DecryptCommand).resolves({ Plaintext: Buffer.from('tme_secret') });
    const sealer = new KmsSealer(new KMSClient({ region: 'us-east-1', endpoint: 'http://127.0.0.1:1' }), 'arn:aws:kms:us-east-1:123456789012:key/k', 'userId');
    const sealed = await sealer.seal('tme_secret', USER.toUpperCase());
    await expect(sealer.open(sealed, USER)).resolves.toBe('tme_secret');
    expect(kms.commandCalls(EncryptCommand)[0]!.args[0].input.EncryptionContext).toEqual({ userId: USER });
    expect(kms.commandCalls(DecryptCommand)[0]!.args[0].input.EncryptionContext).toEqual({ userId: USER });
  });
});

describe('revealKey', () => {
  const sealer = new AesGcmSealer(localKey, 'userId');

  it('gives the owner the key, masked form and creation time', async () => {
    const key = generateApiKey();
    await expect(revealKey(userWith(key, await sealer.seal(key, USER)), sealer, observe)).resolves.toEqual({
      Key: key,
      Masked: `tme_…${key.slice(-4)}`,
      CreatedAt: '2026-11-23T10:00:00.000Z',
    });
  });

  it('404 without a key; 409 for a key not sealed, with reveal off, sealed under another key, or not the current key', async () => {
    const key = generateApiKey();
    const sealed = await sealer.seal(key, USER);
    await expect(revealKey({ id: USER, email: 'ada@example.com', organizations: [] }, sealer, observe)).rejects.toBeInstanceOf(NoKeyProblem);
    await expect(revealKey(userWith(key), sealer, observe)).rejects.toBeInstanceOf(KeyNotRevealableProblem);
    await expect(revealKey(userWith(key, sealed), undefined, observe)).rejects.toBeInstanceOf(KeyNotRevealableProblem);
    await expect(revealKey(userWith(key, sealed), new AesGcmSealer(async () => Buffer.alloc(32, 1), 'userId'), observe)).rejects.toBeInstanceOf(KeyNotRevealableProblem);
    await expect(revealKey(userWith(generateApiKey(), sealed), sealer, observe)).rejects.toBeInstanceOf(KeyNotRevealableProblem);
  });

  it('answers a ciphertext KMS refuses as not revealable, and lets other KMS faults through', async () => {
    const kmsSealer = new KmsSealer(new KMSClient({ region: 'us-east-1', endpoint: 'http://127.0.0.1:1' }), 'k', 'userId');
    const user = userWith(generateApiKey(), 'kms:v1:YmxvYg==');
    kms.on(DecryptCommand).rejects(new InvalidCiphertextException({ message: 'refused', $metadata: {} }));
    await expect(revealKey(user, kmsSealer, observe)).rejects.toBeInstanceOf(KeyNotRevealableProblem);
    kms.reset();
    kms.on(DecryptCommand).rejects(new Error('network down'));
    await expect(revealKey(user, kmsSealer, observe)).rejects.toThrow('network down');
  });
});
