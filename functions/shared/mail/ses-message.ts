/**
 * The mapping from a validated message to an Amazon SES v2 SendEmail request.
 *
 * Every message goes as `Simple` content, SES building the MIME itself: measured, it costs
 * nothing over a message without attachments, where composing MIME here costs 0.5 to 1.5 ms per
 * message and sends the attachments base64-encoded twice. `Simple` carries at most 15 custom
 * header fields of at most 870 characters each, though, and CONTRACT section 12 allows 50 of 998:
 * a message past those limits (and only such a message) is composed as `Raw` MIME here, with
 * nodemailer's composer.
 */
import type { MessageHeader, MessageTag, SendEmailCommandInput } from '@aws-sdk/client-sesv2';
import { encodeWord, encodeWords } from './encoded-words';
import { markNoTrack } from './no-track';
import type { OutgoingEmail } from './ports';
import { configurationSetFor, isTracked, NO_TRACKING } from './tracking';

const UTF8 = 'UTF-8';
// RFC 2047 caps an encoded-word at 75 characters; longer names become several words.
const ENCODED_WORD_MAX = 75;

/** Tag attached to every message so SES events can be traced back to the Organization. */
export const ORGANIZATION_TAG = 'OrganizationId';
/** Tags naming the template version a message was rendered from (a template name is a valid tag value). */
export const TEMPLATE_TAGS = { name: 'TemplateName', version: 'TemplateVersion' } as const;
/** Tag naming the schedule a scheduled message was sent for, so that its delivery events can name it too. */
export const SCHEDULE_TAG = 'ScheduleId';
/** Message tags the service sets itself: a client may not (CONTRACT section 12). */
export const SERVICE_TAGS: readonly string[] = [ORGANIZATION_TAG, TEMPLATE_TAGS.name, TEMPLATE_TAGS.version, SCHEDULE_TAG];
const SERVICE_TAG_NAMES: ReadonlySet<string> = new Set(SERVICE_TAGS.map((name) => name.toLowerCase()));
/** A name of `SERVICE_TAGS`, in any case: a client's tag may not take it. */
export const isServiceTag = (name: string): boolean => SERVICE_TAG_NAMES.has(name.toLowerCase());

/** Amazon SES's limits on `Simple` content's custom headers (API reference, Message and MessageHeader). */
export const SIMPLE_HEADER_LIMITS = { count: 15, valueLength: 870 } as const;

/**
 * The From header value: `"Display \"Name\"" <addr>` for ASCII names, an RFC 2047 encoded-word
 * for anything else (SES rejects raw non-ASCII in that header).
 */
export function formatFromAddress(address: string, displayName?: string): string {
  if (displayName === undefined || displayName === '') return address;
  const isPrintableAscii = /^[\x20-\x7e]*$/.test(displayName);
  const phrase = isPrintableAscii
    ? `"${displayName.replace(/(["\\])/g, '\\$1')}"`
    : // Nodemailer's encoding, written out (./encoded-words): neither libmime's 0.8 MB of charset
      // tables nor nodemailer's extension table on every cold start.
      encodeWord(displayName, 'B', ENCODED_WORD_MAX);
  return `${phrase} <${address}>`;
}

/** A header value as it goes on the wire: unchanged when ASCII, else RFC 2047 encoded-words (only the words that need it). */
export function encodeHeaderValue(value: string): string {
  return /^[\x20-\x7e]*$/.test(value) ? value : encodeWords(value, 'Q', ENCODED_WORD_MAX);
}

function encodedHeaders(email: OutgoingEmail): MessageHeader[] {
  return (email.headers ?? []).map((header) => ({ Name: header.name, Value: encodeHeaderValue(header.value) }));
}

export function emailTags(email: OutgoingEmail): MessageTag[] {
  // A client tag never takes a service tag's name (validation refuses it); one kept from before a
  // name became the service's (a schedule stored then) is left out, so the service's is the one SES gets.
  const own = Object.entries(email.tags ?? {})
    .filter(([name]) => !isServiceTag(name))
    .map(([Name, Value]) => ({ Name, Value }));
  const template = email.template ? [{ Name: TEMPLATE_TAGS.name, Value: email.template.name }, { Name: TEMPLATE_TAGS.version, Value: String(email.template.version) }] : [];
  const schedule = email.scheduleId ? [{ Name: SCHEDULE_TAG, Value: email.scheduleId }] : [];
  return [{ Name: ORGANIZATION_TAG, Value: email.organizationId }, ...template, ...schedule, ...own];
}

/** What both content kinds share: sender, envelope recipients, tags, configuration set. */
function envelope(email: OutgoingEmail, configurationSetName?: string) {
  return {
    FromEmailAddress: formatFromAddress(email.from, email.displayName),
    Destination: {
      ...(email.to.length > 0 && { ToAddresses: [...email.to] }),
      ...(email.cc.length > 0 && { CcAddresses: [...email.cc] }),
      ...(email.bcc.length > 0 && { BccAddresses: [...email.bcc] }),
    },
    EmailTags: emailTags(email),
    ...(configurationSetName && { ConfigurationSetName: configurationSetName }),
  };
}

/** Whether SES's `Simple` content can carry the message's custom headers. */
export function fitsSimpleContent(headers: readonly MessageHeader[]): boolean {
  return headers.length <= SIMPLE_HEADER_LIMITS.count && headers.every((header) => (header.Value ?? '').length <= SIMPLE_HEADER_LIMITS.valueLength);
}

/**
 * The SendEmail request for a message: `Simple` content, or `Raw` MIME when `Simple` cannot carry
 * its headers. `baseConfigurationSet` is the untracked set; a tracked message goes through its
 * tracked sibling (tracking.ts), with its `data-no-track` links marked for SES (no-track.ts).
 */
export async function toSendEmailRequest(email: OutgoingEmail, baseConfigurationSet?: string): Promise<SendEmailCommandInput> {
  const configurationSetName = configurationSetFor(baseConfigurationSet, email.tracking ?? NO_TRACKING);
  const sent = isTracked(email.tracking) && email.html ? { ...email, html: markNoTrack(email.html) } : email;
  const headers = encodedHeaders(sent);
  return fitsSimpleContent(headers) ? toSendEmailInput(sent, configurationSetName, headers) : toRawSendEmailInput(sent, configurationSetName, headers);
}

export function toSendEmailInput(email: OutgoingEmail, configurationSetName?: string, headers = encodedHeaders(email)): SendEmailCommandInput {
  return {
    ...envelope(email, configurationSetName),
    ...(email.replyTo && { ReplyToAddresses: [...email.replyTo] }),
    Content: {
      Simple: {
        Subject: { Data: email.subject, Charset: UTF8 },
        Body: {
          ...(email.text && { Text: { Data: email.text, Charset: UTF8 } }),
          ...(email.html && { Html: { Data: email.html, Charset: UTF8 } }),
        },
        ...(headers.length > 0 && { Headers: headers }),
        ...(email.attachments && {
          Attachments: email.attachments.map((attachment) => ({
            FileName: attachment.fileName,
            RawContent: Buffer.from(attachment.content, 'base64'),
            ContentType: attachment.contentType,
            ContentTransferEncoding: 'BASE64' as const,
            ContentDisposition: attachment.contentId === undefined ? ('ATTACHMENT' as const) : ('INLINE' as const),
            ...(attachment.contentId !== undefined && { ContentId: attachment.contentId }),
          })),
        }),
      },
    },
  };
}

/**
 * A run of ASCII this long without a space cannot go on MIME header lines of at most 998
 * characters (RFC 5322 section 2.1.1; SES refuses a raw message with a longer line): folding
 * breaks only at whitespace, and it would sit on a continuation line of 999. (Non-ASCII text goes
 * as encoded-words, which fold.)
 */
export const UNFOLDABLE_RUN = /[\x21-\x7e]{998}/;

/**
 * Header fields of free text, where mail clients read RFC 2047 encoded-words: `X-*` by custom, and
 * `Comments`. In the others (`List-Unsubscribe`, `References` …) an encoded-word would be taken
 * literally, so an unfoldable value there is refused when the request is validated instead.
 */
export const isFreeTextHeader = (name: string): boolean => /^(x-|comments$)/i.test(name);

/** A free-text value that can go on header lines of at most 998 characters: as encoded-words when it has to. */
function foldable(value: string): string {
  return UNFOLDABLE_RUN.test(value) ? encodeWord(value, 'Q', ENCODED_WORD_MAX) : value;
}

/** The whole message as MIME, composed here: for headers `Simple` content cannot carry. */
export async function toRawSendEmailInput(email: OutgoingEmail, configurationSetName: string | undefined, headers: readonly MessageHeader[]): Promise<SendEmailCommandInput> {
  // Loaded on first use: the composer and what it pulls in (streams, its URL fetcher) would add
  // about 130 KiB and 20 ms to every cold start, for the rare message that needs it.
  const { default: MailComposer } = await import('nodemailer/lib/mail-composer');
  const composer = new MailComposer({
    // Nodemailer quotes and encodes the display name itself; Bcc stays out of the headers (the envelope has it).
    from: email.displayName ? { name: email.displayName, address: email.from } : email.from,
    headers: headers.map(({ Name: key = '', Value: value = '' }) => ({ key, value: isFreeTextHeader(key) ? foldable(value) : value })),
    ...(email.to.length > 0 && { to: [...email.to] }),
    ...(email.cc.length > 0 && { cc: [...email.cc] }),
    ...(email.replyTo && { replyTo: [...email.replyTo] }),
    subject: foldable(email.subject),
    ...(email.text && { text: email.text }),
    ...(email.html && { html: email.html }),
    attachments: (email.attachments ?? []).map((attachment) => ({
      filename: attachment.fileName,
      content: Buffer.from(attachment.content, 'base64'),
      contentType: attachment.contentType,
      contentDisposition: attachment.contentId === undefined ? 'attachment' : 'inline',
      ...(attachment.contentId !== undefined && { cid: attachment.contentId }),
    })),
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  const data = await composer.compile().build();
  return { ...envelope(email, configurationSetName), Content: { Raw: { Data: data } } };
}
