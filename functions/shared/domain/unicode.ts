/**
 * Well-formed text (CONTRACT section 2): a string holding a lone surrogate (a JSON escape such as
 * `\ud800` with no partner) can be neither sent as UTF-8 nor checked as an address.
 */

// With the `u` flag a surrogate pair is one code point, so only an unpaired half matches.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
/** The same, for every one in a text (a global pattern of its own: `test` on a global one keeps state). */
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'gu');

export function isWellFormedText(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

/** The text with each lone surrogate replaced by U+FFFD, as a UTF-8 encoder would write it. */
export function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATES, '\uFFFD');
}

/** Length in code points (what a person counts), not UTF-16 units. */
export function codePointLength(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/**
 * Lower-cases A-Z and nothing else. `String.prototype.toLowerCase` folds some non-ASCII letters
 * into ASCII ones (U+212A KELVIN SIGN becomes `k`), which would let `\u212Aate@…` match `kate@…`;
 * addresses are compared ASCII-case-insensitively only.
 */
export function asciiLowerCase(text: string): string {
  return text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}
