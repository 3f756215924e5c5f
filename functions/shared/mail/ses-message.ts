/**
 * The mapping from a validated message to an Amazon SES v2 SendEmail request.
 */
import type { SendEmailCommandInput } from '@aws-sdk/client-sesv2';
import { encodeWord } from 'nodemailer/lib/mime-funcs';
import type { OutgoingEmail } from './ports';

const UTF8 = 'UTF-8';
// RFC 2047 caps an encoded-word at 75 characters; longer names become several words.
const ENCODED_WORD_MAX = 75;

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
    : // Nodemailer's MIME functions (no dependencies), not libmime: the same encoding, without the
      // 0.8 MB of charset tables libmime would add to every cold start.
      encodeWord(displayName, 'B', ENCODED_WORD_MAX);
  return `${phrase} <${address}>`;
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
