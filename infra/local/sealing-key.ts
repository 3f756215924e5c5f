/**
 * The local stack's stand-in for the stack's KMS key: a random 256-bit key kept in a file of its
 * own beside the local data (`<LOCAL_DATA_DIR>/sealing.key`, readable by your user only), never in
 * the table, so a table read alone does not open a webhook secret or a sealed API key locally either. The admin CLI
 * and the local stack find the same file; `LOCAL_SEALING_KEY` (base64, 32 bytes) sets the key
 * instead. The file is made the first time a secret is sealed, so a stack that never sees a
 * webhook writes nothing: with `LOCAL_DATA=memory` it is the one file written, and only once a
 * webhook is set, since the CLI that seals the secret and the stack that opens it are two
 * processes that must find the same key.
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AesGcmSealer } from '../../functions/shared/webhooks/sealing';
import type { SealBinding } from '../../functions/shared/webhooks/sealing';
import { DEFAULT_DATA_DIR } from './settings';

const FILE = 'sealing.key';

async function loadOrCreate(dir: string): Promise<Buffer> {
  const path = join(dir, FILE);
  const existing = await readFile(path, 'utf8').catch(() => undefined);
  if (existing) return Buffer.from(existing.trim(), 'base64');
  await mkdir(dir, { recursive: true });
  // Written whole under a private name, then linked into place: a racing stack or CLI either
  // wins or reads the winner's complete key, never half of one.
  const draft = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(draft, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
  await link(draft, path).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  await unlink(draft).catch(() => undefined);
  return Buffer.from((await readFile(path, 'utf8')).trim(), 'base64');
}

/** `binding`: what the secrets are bound to (webhook secrets: their Organization; API keys: their user). */
export function localSealer(env: Readonly<Record<string, string | undefined>> = process.env, binding: SealBinding = 'organizationId'): AesGcmSealer {
  const given = env.LOCAL_SEALING_KEY?.trim();
  const dir = env.LOCAL_DATA_DIR?.trim() || DEFAULT_DATA_DIR;
  let key: Promise<Buffer> | undefined;
  return new AesGcmSealer(() => {
    key ??= given ? Promise.resolve(Buffer.from(given, 'base64')) : loadOrCreate(dir);
    return key;
  }, binding);
}
