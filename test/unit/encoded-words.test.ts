/**
 * The service's RFC 2047 encoder against nodemailer's, which it replaces on the send path so that
 * nodemailer's extension table stays out of the cold start: the same words, character for
 * character, for any text.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import libmime from 'libmime';
import * as nodemailer from 'nodemailer/lib/mime-funcs';
import { encodeWord, encodeWords } from '../../functions/shared/mail/encoded-words';

// Seeded, so a failure replays; a run of 2,000 takes well under a second.
const RUNS = { seed: 3_200_004, numRuns: 2_000 };

/** Text that reaches every branch: ASCII around the specials, Latin, CJK, emoji (surrogate pairs), lone surrogates, controls. */
const piece = fc.oneof(
  fc.constantFrom(' ', '  ', '"', '=', '?', '_', '\t', '\r', '\n', '\r\n', '=?', '?=', '=C3', '\u0080', '\u00a0', '\ud800', '\udc00', '\u2028'),
  fc.string({ unit: fc.constantFrom(...'aZ09!*+-/.,;:<>@()[]\\'.split('')), maxLength: 12 }),
  fc.string({ unit: fc.constantFrom(...'äöüßéèçñøåÆŒ€£¥'.split('')), maxLength: 40 }),
  fc.string({ unit: fc.constantFrom(...'日本語中文한국어'.split('')), maxLength: 30 }),
  fc.string({ unit: fc.constantFrom('😀', '👍🏽', '🇩🇪', '𝄞'), maxLength: 25 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
);
const text = fc.array(piece, { maxLength: 12 }).map((pieces) => pieces.join(''));
const maxLength = fc.constantFrom(0, 8, 12, 13, 16, 40, 75, 76, 100);

describe('encodeWord', () => {
  it('gives what nodemailer gives, B and Q, at any word length (property)', () => {
    fc.assert(
      fc.property(text, fc.constantFrom('B' as const, 'Q' as const), maxLength, (value, encoding, max) => {
        expect(encodeWord(value, encoding, max)).toBe(nodemailer.encodeWord(value, encoding, max));
      }),
      RUNS,
    );
  });

  it('splits long text into words of at most 75 characters that decode back to it', () => {
    const name = `Zoë ${'日本語'.repeat(20)} 😀`.repeat(2);
    for (const encoding of ['B', 'Q'] as const) {
      const encoded = encodeWord(name, encoding, 75);
      const words = encoded.split(' ');
      expect(words.length).toBeGreaterThan(2);
      expect(words.every((word) => word.length <= 75 && word.startsWith(`=?UTF-8?${encoding}?`))).toBe(true);
      expect(libmime.decodeWords(encoded)).toBe(name);
    }
    expect(encodeWord('Zoë', 'B', 75)).toBe('=?UTF-8?B?Wm/Dqw==?=');
  });
});

describe('encodeWords', () => {
  it('gives what nodemailer gives, encoding only the stretch that needs it (property)', () => {
    fc.assert(
      fc.property(text, fc.constantFrom('B' as const, 'Q' as const), maxLength, (value, encoding, max) => {
        expect(encodeWords(value, encoding, max)).toBe(nodemailer.encodeWords(value, encoding, max));
      }),
      RUNS,
    );
  });

  it('leaves the ASCII words around the encoded stretch as they were', () => {
    expect(encodeWords('Grüße aus Köln <x@example.com>', 'Q', 75)).toBe('=?UTF-8?Q?Gr=C3=BC=C3=9Fe_aus_K=C3=B6ln?= <x@example.com>');
    expect(encodeWords('plain ascii', 'Q', 75)).toBe('plain ascii');
  });
});
