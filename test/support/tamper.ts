/**
 * Tampering helpers for tests that need a credential or a signed URL that is almost, but never
 * quite, the real one.
 */

/**
 * The same text with its last character swapped for another one. Always differs from the input:
 * replacing the last character with a fixed letter does not when the text already ends in it
 * (one random key in 64 does), which made a test pass the real key and get 200.
 */
export function withLastCharChanged(text: string): string {
  return `${text.slice(0, -1)}${text.endsWith('A') ? 'B' : 'A'}`;
}
