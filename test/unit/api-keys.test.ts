import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { generateApiKey, hashApiKey, isTestApiKey, isWellFormedApiKey, keyLastFour, KEY_PREFIX, maskApiKey, REDACTED_KEY, redactApiKeys, redactingReplacer } from '../../functions/shared/domain/api-keys';
import { problemResponse } from '../../functions/shared/http/middleware/problem-responses';
import { ValidationProblem } from '../../functions/shared/http/problems';

describe('API keys', () => {
  it('carries the recognisable prefix and a fixed length', () => {
    const key = generateApiKey();
    expect(key.startsWith(KEY_PREFIX)).toBe(true);
    expect(key).toMatch(/^tme_[0-9A-Za-z]{49}$/);
  });

  it('is different every time (256 bits of randomness)', () => {
    const keys = new Set(Array.from({ length: 500 }, generateApiKey));
    expect(keys.size).toBe(500);
  });

  it('passes its own checksum', () => {
    for (let i = 0; i < 50; i++) expect(isWellFormedApiKey(generateApiKey())).toBe(true);
  });

  it('fails the checksum when any character is changed', () => {
    const key = generateApiKey();
    for (const position of [KEY_PREFIX.length, KEY_PREFIX.length + 20, key.length - 1]) {
      const changed = key.slice(0, position) + (key[position] === 'a' ? 'b' : 'a') + key.slice(position + 1);
      expect(isWellFormedApiKey(changed)).toBe(false);
    }
  });

  it.each(['', 'tme_', 'sk_live_abc', `xyz_${'a'.repeat(49)}`, `tme_${'a'.repeat(48)}`, `tme_${'-'.repeat(49)}`])('refuses %p', (candidate) => {
    expect(isWellFormedApiKey(candidate)).toBe(false);
  });

  it('hashes with SHA-256 to 64 hex characters, deterministically', () => {
    const key = generateApiKey();
    expect(hashApiKey(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey(key)).toBe(hashApiKey(key));
    expect(hashApiKey(key)).not.toContain(key.slice(KEY_PREFIX.length, KEY_PREFIX.length + 8));
  });

  it('masks to the prefix and the last four characters', () => {
    const key = generateApiKey();
    const masked = maskApiKey(keyLastFour(key));
    expect(masked).toBe(`tme_…${key.slice(-4)}`);
    expect(masked).not.toContain(key.slice(4, -4));
  });

  it('makes test-mode keys that start tme_test_, pass the checksum and are told apart from live ones', () => {
    const test = generateApiKey({ test: true });
    const live = generateApiKey();
    expect(test).toMatch(/^tme_test_[0-9A-Za-z]{49}$/);
    expect(isWellFormedApiKey(test)).toBe(true);
    expect([isTestApiKey(test), isTestApiKey(live)]).toEqual([true, false]);
    expect(maskApiKey(keyLastFour(test), true)).toBe(`tme_test_…${test.slice(-4)}`);
  });

  it('refuses a test prefix without its underscore, or with a character of the key missing', () => {
    const live = generateApiKey();
    expect(isWellFormedApiKey(`tme_test${live.slice(4)}`)).toBe(false);
    expect(isWellFormedApiKey(`tme_test_${live.slice(5)}`)).toBe(false);
  });
});

describe('redactApiKeys', () => {
  const key = fc.boolean().map((test) => generateApiKey({ test }));
  // Text around a key: anything, but no key characters touching it (they would make the key longer, which is redacted too).
  const around = fc.string().map((text) => text.replace(/[0-9A-Za-z_]+$/, '').replace(/^[0-9A-Za-z_]+/, ''));

  it('leaves no live or test key, nor any part of one past its first 20 characters, in any text around it', () => {
    fc.assert(
      fc.property(around, key, around, key, (before, first, between, second) => {
        const out = redactApiKeys(`${before}${first}${between}/${second}`);
        for (const k of [first, second]) expect(out).not.toContain(k.slice(4, 20));
        expect(out).toBe(`${before}${REDACTED_KEY}${between}/${REDACTED_KEY}`);
      }),
    );
  });

  it('redacts a truncated or mistyped key as well, and leaves text without one as it was', () => {
    const k = generateApiKey();
    expect(redactApiKeys(`/v1.2/templates/${k.slice(0, 30)}`)).toBe(`/v1.2/templates/${REDACTED_KEY}`);
    expect(redactApiKeys(`GET /${k}x 404`)).toBe(`GET /${REDACTED_KEY} 404`);
    fc.assert(fc.property(fc.string().filter((text) => !text.includes('tme_')), (text) => redactApiKeys(text) === text));
    // What `key show` prints and too short a tail are not keys.
    expect(redactApiKeys(maskApiKey('ab12'))).toBe(maskApiKey('ab12'));
    expect(redactApiKeys('tme_short')).toBe('tme_short');
    expect(redactApiKeys('/v1.2/templates/tme_welcome_email')).toBe('/v1.2/templates/tme_welcome_email');
    expect(redactApiKeys('tme_order_confirmation_reminder_v2')).toBe('tme_order_confirmation_reminder_v2');
    expect(redactApiKeys(`${k}_v2`)).toBe(`${REDACTED_KEY}_v2`);
    expect(redactApiKeys(k.slice(0, 24))).toBe(REDACTED_KEY);
  });
});

describe('redactingReplacer', () => {
  it('redacts string values, so a JSON body stays valid whatever escape comes before a key-like string', () => {
    const key = generateApiKey();
    // "\t" then "me_…": redacting the JSON text would have cut the escape "\\t" in half.
    const tab = `\tme_${'a'.repeat(24)}`;
    const { body } = problemResponse(new ValidationProblem([{ pointer: `/Messages/0/${tab}`, detail: 'unknown field' }, { pointer: `/${key}`, detail: key }]), '/problems/', 'r-1');
    const parsed = JSON.parse(body) as { errors: { pointer: string; detail: string }[] };
    expect(parsed.errors).toEqual([{ pointer: `/Messages/0/${tab}`, detail: 'unknown field' }, { pointer: `/${REDACTED_KEY}`, detail: REDACTED_KEY }]);
    fc.assert(fc.property(fc.dictionary(fc.string(), fc.string()), (value) => void JSON.parse(JSON.stringify(value, redactingReplacer))));
  });
});
