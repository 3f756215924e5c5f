/**
 * The mapping from a validated message to an Amazon SES v2 SendEmail request.
 */
import type { SendEmailCommandInput } from '@aws-sdk/client-sesv2';
import type { OutgoingEmail } from './ports';

const UTF8 = 'UTF-8';
// RFC 2047 caps an encoded-word at 75 characters: `=?UTF-8?B?` and `?=` take 12, which leaves 63
// for base64, i.e. 15 groups of 4 characters, each carrying 3 bytes of the UTF-8 text.
const ENCODED_WORD_MAX_BYTES = 45;

/** Tag attached to every message so SES events can be traced back to the Organization. */
export const ORGANIZATION_TAG = 'OrganizationId';

/**
 * The From header value: `"Display \"Name\"" <addr>` for ASCII names, an RFC 2047 encoded-word
 * for anything else (SES rejects raw non-ASCII in that header).
 */
export function formatFromAddress(address: string, displayName?: string): string {
  if (displayName === undefined || displayName === '') return address;
  const isPrintableAscii = /^[\x20-\x7e]*$/.test(displayName);
  const phrase = isPrintableAscii
    ? `"${displayName.replace(/(["\\])/g, '\\$1')}"`
    : encodeWords(displayName);
  return `${phrase} <${address}>`;
}

/**
 * RFC 2047 "B" encoded-words, separated by spaces (a decoder joins adjacent words without them).
 * The text is cut only between code points, so no character is split across two words
 * (section 5). Written out rather than taken from libmime: the same output, but libmime brings
 * iconv-lite and encoding-japanese, 0.8 MB of the function bundle, parsed at every cold start.
 */
function encodeWords(text: string): string {
  const words: string[] = [];
  let word = '';
  let bytes = 0;
  for (const char of text) {
    const size = Buffer.byteLength(char, 'utf8');
    if (word !== '' && bytes + size > ENCODED_WORD_MAX_BYTES) {
      words.push(word);
      word = '';
      bytes = 0;
    }
    word += char;
    bytes += size;
  }
  if (word !== '') words.push(word);
  return words.map((w) => `=?${UTF8}?B?${Buffer.from(w, 'utf8').toString('base64')}?=`).join(' ');
}

export function toSendEmailInput(email: OutgoingEmail, configurationSetName?: string): SendEmailCommandInput {
  return {
    FromEmailAddress: formatFromAddress(email.from, email.displayName),
    Destination: {
      ...(email.to.length > 0 && { ToAddresses: [...email.to] }),
      ...(email.cc.length > 0 && { CcAddresses: [...email.cc] }),
      ...(email.bcc.length > 0 && { BccAddresses: [...email.bcc] }),
    },
    Content: {
      Simple: {
        Subject: { Data: email.subject, Charset: UTF8 },
        Body: {
          ...(email.text && { Text: { Data: email.text, Charset: UTF8 } }),
          ...(email.html && { Html: { Data: email.html, Charset: UTF8 } }),
        },
      },
    },
    EmailTags: [{ Name: ORGANIZATION_TAG, Value: email.organizationId }],
    ...(configurationSetName && { ConfigurationSetName: configurationSetName }),
  };
}
