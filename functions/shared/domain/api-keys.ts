/**
 * API keys: random, recognisable, checksummed, and stored only as a SHA-256 hash.
 *
 * Shape: `tme_` + 43 base62 characters (32 random bytes) + 6 base62 characters of CRC-32 over
 * the random part. The prefix lets secret scanners find leaked keys; the checksum lets the
 * service (and scanners) reject mistyped or invented keys without a database read.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

export const KEY_PREFIX = 'tme_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BODY_LENGTH = 43;
const CHECKSUM_LENGTH = 6;
const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${BODY_LENGTH + CHECKSUM_LENGTH}}$`);

function base62(value: bigint, width: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < width; i++) {
    out = BASE62[Number(rest % 62n)] + out;
    rest /= 62n;
  }
  return out;
}

function checksum(body: string): string {
  return base62(BigInt(crc32(body)), CHECKSUM_LENGTH);
}

/** A new key with 256 bits of entropy. */
export function generateApiKey(): string {
  const body = base62(BigInt(`0x${randomBytes(32).toString('hex')}`), BODY_LENGTH);
  return `${KEY_PREFIX}${body}${checksum(body)}`;
}

/** True when the string has the key's shape and its checksum matches. */
export function isWellFormedApiKey(candidate: string): boolean {
  if (!KEY_PATTERN.test(candidate)) return false;
  const body = candidate.slice(KEY_PREFIX.length, KEY_PREFIX.length + BODY_LENGTH);
  const given = Buffer.from(candidate.slice(KEY_PREFIX.length + BODY_LENGTH));
  return timingSafeEqual(given, Buffer.from(checksum(body)));
}

/** The only form of a key that is ever stored or used as a lookup key. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** The last four characters, kept so a key can be recognised later without storing it. */
export function keyLastFour(key: string): string {
  return key.slice(-4);
}

/** What `key show` prints: the prefix and the last four characters. */
export function maskApiKey(lastFour: string): string {
  return `${KEY_PREFIX}…${lastFour}`;
}
