/**
 * Webhook signing secrets are stored sealed, so that reading the table alone does not reveal
 * them (CONTRACT section 10). One port, two adapters: in AWS the stack's KMS key seals them
 * (`KmsSealer`); locally a key of the local stack's own does, with AES-256-GCM (`AesGcmSealer`).
 * Either binds the sealed secret to its Organization (KMS encryption context, GCM additional
 * data), so a sealed secret copied onto another Organization's item does not open.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { DecryptCommand, EncryptCommand } from '@aws-sdk/client-kms';
import type { KMSClient } from '@aws-sdk/client-kms';

export interface SecretSealer {
  seal(secret: string, organizationId: string): Promise<string>;
  open(sealed: string, organizationId: string): Promise<string>;
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
const context = (organizationId: string) => ({ organizationId: organizationId.toLowerCase() });

export class KmsSealer implements SecretSealer {
  constructor(
    private readonly client: KMSClient,
    private readonly keyId: string,
  ) {}

  async seal(secret: string, organizationId: string): Promise<string> {
    const { CiphertextBlob } = await this.client.send(
      new EncryptCommand({ KeyId: this.keyId, Plaintext: Buffer.from(secret, 'utf8'), EncryptionContext: context(organizationId) }),
    );
    if (!CiphertextBlob) throw new SealedSecretError('KMS returned no ciphertext');
    return `${KMS_PREFIX}${Buffer.from(CiphertextBlob).toString('base64')}`;
  }

  async open(sealed: string, organizationId: string): Promise<string> {
    if (!sealed.startsWith(KMS_PREFIX)) throw new SealedSecretError('not a KMS-sealed secret (was it set against the local stack?)');
    // The key id is given so a ciphertext under any other key is refused rather than opened.
    const { Plaintext } = await this.client.send(
      new DecryptCommand({ KeyId: this.keyId, CiphertextBlob: Buffer.from(sealed.slice(KMS_PREFIX.length), 'base64'), EncryptionContext: context(organizationId) }),
    );
    if (!Plaintext) throw new SealedSecretError('KMS returned no plaintext');
    return Buffer.from(Plaintext).toString('utf8');
  }
}

/** AES-256-GCM under a 32-byte key: `local:v1:` + base64(iv ‖ tag ‖ ciphertext). */
export class AesGcmSealer implements SecretSealer {
  constructor(private readonly key: () => Promise<Buffer>) {}

  async seal(secret: string, organizationId: string): Promise<string> {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', await this.key(), iv);
    cipher.setAAD(Buffer.from(context(organizationId).organizationId, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return `${LOCAL_PREFIX}${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64')}`;
  }

  async open(sealed: string, organizationId: string): Promise<string> {
    if (!sealed.startsWith(LOCAL_PREFIX)) throw new SealedSecretError('not a locally sealed secret (was it set against a deployed table?)');
    const raw = Buffer.from(sealed.slice(LOCAL_PREFIX.length), 'base64');
    try {
      const decipher = createDecipheriv('aes-256-gcm', await this.key(), raw.subarray(0, 12));
      decipher.setAAD(Buffer.from(context(organizationId).organizationId, 'utf8'));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    } catch (error) {
      throw new SealedSecretError('the sealed secret does not open with this key and Organization', { cause: error });
    }
  }
}
