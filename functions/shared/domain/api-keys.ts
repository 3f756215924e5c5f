/**
 * API keys: random, recognisable, checksummed, and stored only as a SHA-256 hash.
 *
 * Shape: `tme_` + 43 base62 characters (32 random bytes) + 6 base62 characters of CRC-32 over
 * the random part. The prefix lets secret scanners find leaked keys; the checksum lets the
 * service (and scanners) reject mistyped or invented keys without a database read. A test-mode
 * key (docs/keys.md) starts `tme_test_` instead: its mode is part of the key itself, so nobody
 * can take a test key for a live one, nor the service a live key for a test one.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

export const KEY_PREFIX = 'tme_';
/** The prefix of a test-mode key: its messages never reach Amazon SES. */
export const TEST_KEY_PREFIX = 'tme_test_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BODY_LENGTH = 43;
const CHECKSUM_LENGTH = 6;
const KEY_PATTERN = new RegExp(`^(?:${TEST_KEY_PREFIX}|${KEY_PREFIX})([0-9A-Za-z]{${BODY_LENGTH + CHECKSUM_LENGTH}})$`);

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

/** A new key with 256 bits of entropy; a test-mode key with `test`. */
export function generateApiKey(options: { readonly test?: boolean } = {}): string {
  const body = base62(BigInt(`0x${randomBytes(32).toString('hex')}`), BODY_LENGTH);
  return `${options.test ? TEST_KEY_PREFIX : KEY_PREFIX}${body}${checksum(body)}`;
}

/** True when the string has the key's shape and its checksum matches. */
export function isWellFormedApiKey(candidate: string): boolean {
  const random = KEY_PATTERN.exec(candidate)?.[1];
  if (random === undefined) return false;
  const given = Buffer.from(random.slice(BODY_LENGTH));
  return timingSafeEqual(given, Buffer.from(checksum(random.slice(0, BODY_LENGTH))));
}

/** Whether a (well-formed) key is a test-mode key. */
export function isTestApiKey(key: string): boolean {
  return key.startsWith(TEST_KEY_PREFIX);
}

/** The only form of a key that is ever stored or used as a lookup key. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** The last four characters, kept so a key can be recognised later without storing it. */
export function keyLastFour(key: string): string {
  return key.slice(-4);
}

/**
 * A key's prefix (live or test) and at least 20 more key characters: a whole key, a truncated or
 * mistyped one (still mostly secret). What a secret scanner would flag. Key characters are base62
 * only, so names that merely start `tme_` (a template called `tme_order_confirmation`) are not
 * taken for one.
 */
const KEY_LIKE = /tme_(?:test_)?[0-9A-Za-z]{20,}/g;
export const REDACTED_KEY = '[redacted API key]';

/**
 * `text` with every key-like string in it replaced: for what the service writes out of what a
 * client sent (a path in a log line, a name in an error body), where a key put in the wrong place
 * (`GET /v1.2/templates/tme_…`) must not be logged or echoed either.
 */
export function redactApiKeys(text: string): string {
  return text.includes('tme_') ? text.replace(KEY_LIKE, REDACTED_KEY) : text;
}

/**
 * A `JSON.stringify` replacer that redacts every string value. On the values, not the JSON text:
 * an escape before a key-like string (`"\\tme_…"`) must not be cut in half.
 */
export function redactingReplacer(_key: string, value: unknown): unknown {
  return typeof value === 'string' ? redactApiKeys(value) : value;
}

/** What `key show` prints: the prefix and the last four characters. */
export function maskApiKey(lastFour: string, test = false): string {
  return `${test ? TEST_KEY_PREFIX : KEY_PREFIX}…${lastFour}`;
}
