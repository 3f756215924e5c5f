/**
 * Webhook signing secrets are stored sealed, so that reading the table alone does not reveal
 * them (CONTRACT section 10). One port, two adapters: in AWS the stack's KMS key seals them
 * (`KmsSealer`); locally a key of the local stack's own does, with AES-256-GCM (`AesGcmSealer`).
 * Either binds the sealed secret to its Organization (KMS encryption context, GCM additional
 * data), so a sealed secret copied onto another Organization's item does not open.
 *
 * API keys are sealed the same way (CONTRACT section 3, item 2), bound to their user instead:
 * the sealers take the name of what they bind to (`organizationId`, the default, or `userId`),
 * which becomes the KMS encryption context's key, so IAM can let a role open one kind only.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { DecryptCommand, EncryptCommand } from '@aws-sdk/client-kms';
import type { KMSClient } from '@aws-sdk/client-kms';

export interface SecretSealer {
  /** `owner`: the Organization (webhook secrets) or user (API keys) the secret is bound to. */
  seal(secret: string, owner: string): Promise<string>;
  open(sealed: string, owner: string): Promise<string>;
}

/** A sealed secret that cannot be opened: another key, another Organization, or tampered with. */
export class SealedSecretError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'SealedSecretError';
  }
}

const KMS_PREFIX = 'kms:v1:';
const LOCAL_PREFIX = 'local:v1:';
/** What a secret is bound to: the encryption context's one key. */
export type SealBinding = 'organizationId' | 'userId';
const context = (binding: SealBinding, owner: string) => ({ [binding]: owner.toLowerCase() });
/** GCM's additional data: the owner, named unless it is an Organization (as webhook secrets were first sealed). */
const additionalData = (binding: SealBinding, owner: string) => Buffer.from(binding === 'organizationId' ? owner.toLowerCase() : `${binding}:${owner.toLowerCase()}`, 'utf8');

export class KmsSealer implements SecretSealer {
  constructor(
    private readonly client: KMSClient,
    private readonly keyId: string,
    private readonly binding: SealBinding = 'organizationId',
  ) {}

  async seal(secret: string, owner: string): Promise<string> {
    const { CiphertextBlob } = await this.client.send(
      new EncryptCommand({ KeyId: this.keyId, Plaintext: Buffer.from(secret, 'utf8'), EncryptionContext: context(this.binding, owner) }),
    );
    if (!CiphertextBlob) throw new SealedSecretError('KMS returned no ciphertext');
    return `${KMS_PREFIX}${Buffer.from(CiphertextBlob).toString('base64')}`;
  }

  async open(sealed: string, owner: string): Promise<string> {
    if (!sealed.startsWith(KMS_PREFIX)) throw new SealedSecretError('not a KMS-sealed secret (was it set against the local stack?)');
    // The key id is given so a ciphertext under any other key is refused rather than opened.
    const { Plaintext } = await this.client.send(
      new DecryptCommand({ KeyId: this.keyId, CiphertextBlob: Buffer.from(sealed.slice(KMS_PREFIX.length), 'base64'), EncryptionContext: context(this.binding, owner) }),
    );
    if (!Plaintext) throw new SealedSecretError('KMS returned no plaintext');
    return Buffer.from(Plaintext).toString('utf8');
  }
}

/** AES-256-GCM under a 32-byte key: `local:v1:` + base64(iv ‖ tag ‖ ciphertext). */
export class AesGcmSealer implements SecretSealer {
  constructor(
    private readonly key: () => Promise<Buffer>,
    private readonly binding: SealBinding = 'organizationId',
  ) {}

  async seal(secret: string, owner: string): Promise<string> {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', await this.key(), iv);
    cipher.setAAD(additionalData(this.binding, owner));
    const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return `${LOCAL_PREFIX}${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64')}`;
  }

  async open(sealed: string, owner: string): Promise<string> {
    if (!sealed.startsWith(LOCAL_PREFIX)) throw new SealedSecretError('not a locally sealed secret (was it set against a deployed table?)');
    const raw = Buffer.from(sealed.slice(LOCAL_PREFIX.length), 'base64');
    try {
      const decipher = createDecipheriv('aes-256-gcm', await this.key(), raw.subarray(0, 12));
      decipher.setAAD(additionalData(this.binding, owner));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    } catch (error) {
      throw new SealedSecretError('the sealed secret does not open with this key and owner', { cause: error });
    }
  }
}
