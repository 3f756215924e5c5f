/**
 * RFC 2047 encoded-words in UTF-8, for the From display name (`B`) and custom header values (`Q`).
 *
 * The same output as nodemailer's `encodeWord` / `encodeWords` (lib/mime-funcs) with a 75-character
 * word limit, character for character: a fast-check property holds the two together
 * (test/unit/encoded-words.test.ts). Written out here because importing those two from nodemailer
 * also imports its table of file extensions (76 KiB, two Maps built at import), which would then
 * be read and built on every cold start for messages that mostly need neither.
 */

const CHARSET = 'UTF-8';
// "=?UTF-8?X?" and "?=" around each word's encoded text.
const WORD_OVERHEAD = 7 + CHARSET.length;
// Bytes a Q word keeps as they are; every other byte is =XX, a space inside the text is "_".
const Q_LITERAL = /[A-Za-z0-9!*+\-/]/;

const hex = (byte: number) => `=${byte < 0x10 ? '0' : ''}${byte.toString(16).toUpperCase()}`;

function qEncode(text: string): string {
  const bytes = Buffer.from(text, 'utf-8');
  let out = '';
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    const next = bytes[i + 1];
    if (byte < 0x80 && Q_LITERAL.test(String.fromCharCode(byte))) out += String.fromCharCode(byte);
    // Quoted-printable keeps a space as it is except at the end of a line, where it must show.
    else if (byte === 0x20 && next !== undefined && next !== 0x0a && next !== 0x0d) out += '_';
    else out += hex(byte);
  }
  return out;
}

/** Q-encoded text cut into parts of at most `maxLength`, never inside an =XX or a UTF-8 sequence. */
function splitQ(encoded: string, maxLength: number): string[] {
  const parts: string[] = [];
  let rest = encoded;
  const max = Math.max(maxLength, 12);
  while (rest.length) {
    let part = rest.slice(0, max);
    const cut = /=[0-9A-F]?$/i.exec(part);
    if (cut) part = part.slice(0, cut.index);
    // Stray continuation bytes have no clean cut: then the widest part that keeps =XX whole.
    const fallback = part.length ? part : rest.slice(0, max);
    let clean = false;
    while (!clean && part.length) {
      clean = true;
      const following = /^=([0-9A-F]{2})/i.exec(rest.slice(part.length));
      const byte = following ? parseInt(following[1]!, 16) : 0;
      // The next byte continues a UTF-8 sequence (0x80–0xC1): move back one byte and look again.
      if (byte > 0x7f && byte < 0xc2) {
        part = part.slice(0, Math.max(0, part.length - 3));
        clean = false;
      }
    }
    if (!part.length) part = fallback;
    parts.push(part);
    rest = rest.slice(part.length);
  }
  return parts;
}

/** B-encoded parts of at most `maxBytes` bytes of UTF-8 before encoding, never splitting a character. */
function splitB(text: string, maxBytes: number): string[] {
  const parts: string[] = [];
  let part = '';
  for (let i = 0; i < text.length; i++) {
    let chr = text.charAt(i);
    if (/[\ud800-\udbff]/.test(chr) && /[\udc00-\udfff]/.test(text.charAt(i + 1))) chr += text.charAt(++i);
    if (Buffer.byteLength(part + chr) <= maxBytes || i === 0) part += chr;
    else {
      parts.push(Buffer.from(part, 'utf-8').toString('base64'));
      part = chr;
    }
  }
  if (part) parts.push(Buffer.from(part, 'utf-8').toString('base64'));
  return parts;
}

/** `text` as one or more encoded-words of at most `maxLength` characters each, separated by spaces. */
export function encodeWord(text: string, encoding: 'B' | 'Q', maxLength: number): string {
  const room = maxLength > WORD_OVERHEAD ? maxLength - WORD_OVERHEAD : maxLength;
  let parts: string[];
  if (encoding === 'Q') {
    const encoded = qEncode(text);
    parts = room && encoded.length > room ? splitQ(encoded, room) : [encoded];
  } else {
    // Base64 turns 3 bytes into 4 characters: the most bytes whose encoding fits the room.
    const bytes = room ? Math.max(3, ((room - (room % 4)) / 4) * 3) : 0;
    const whole = Buffer.from(text, 'utf-8').toString('base64');
    parts = bytes && whole.length > bytes ? splitB(text, bytes) : [whole];
  }
  return `=?${CHARSET}?${encoding}?${parts.join(`?= =?${CHARSET}?${encoding}?`)}?=`;
}

/**
 * `value` with the stretch from its first to its last word holding a non-ASCII character or a
 * double quote as encoded-words, and the rest as it was.
 */
export function encodeWords(value: string, encoding: 'B' | 'Q', maxLength: number): string {
  const first = /(?:^|\s)([^\s]*["\u0080-\uFFFF])/.exec(value);
  const last = /(["\u0080-\uFFFF][^\s]*)[^"\u0080-\uFFFF]*$/.exec(value);
  if (!first || !last) return value;
  const start = first.index + (/[^\s]/.exec(first[0])?.index ?? 0);
  const end = last.index + last[1]!.length;
  return value.slice(0, start) + encodeWord(value.slice(start, end), encoding, maxLength) + value.slice(end);
}
