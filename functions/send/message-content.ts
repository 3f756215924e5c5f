/**
 * The Message fields beyond the specification (CONTRACT section 12): `ReplyTo`, `Headers`,
 * `Tags` and `Attachments`. Each rule is checked here, before anything is sent, with the
 * pointer of the value at fault, so that nothing SES would refuse later (a header it writes
 * itself, a tag name it cannot take, a file type on its list of unsupported attachments, base64
 * it cannot decode) ever reaches it: SES would refuse such a message only after the others of the
 * batch had gone out.
 */
import { parseEmailAddress } from '../shared/domain/email-address';
import { CONTROL_CHARACTERS } from '../shared/domain/header-safety';
import { codePointLength } from '../shared/domain/unicode';
import type { Json, ProblemList } from '../shared/http/body-rules';
import { isObject, own, textField, unknownFields } from '../shared/http/body-rules';
import { escapePointer } from '../shared/http/json-pointer';
import type { CustomHeader, OutgoingAttachment, OutgoingEmail } from '../shared/mail/ports';
import { isFreeTextHeader, isServiceTag, UNFOLDABLE_RUN } from '../shared/mail/ses-message';
import { contentTypeOf } from './content-types';
import { fileNameRefusal } from './file-names';

export const LIMITS = {
  replyTo: 10,
  headers: 50,
  /** RFC 5322 allows longer names, but a name must leave room for its value on a 78-character line. */
  headerName: 76,
  /** RFC 5322's hard line limit. */
  headerValue: 998,
  /** Amazon SES's limits on message tags. */
  tags: 10,
  tag: 256,
  attachments: 10,
  fileName: 255,
  /** Amazon SES's limit on an attachment's content type and content id. */
  contentType: 78,
  contentId: 78,
} as const;

/**
 * Header fields the service writes itself (or SES does): a client's copy would clash with
 * them or forge them. Compared in lower case; every `Content-*` field is the MIME structure's.
 */
const WRITTEN_HEADERS = new Set(['from', 'to', 'cc', 'bcc', 'subject', 'reply-to', 'date', 'message-id', 'mime-version', 'return-path', 'dkim-signature', 'received']);
/**
 * Header fields that name a sender or instruct or vouch to a mail system (security audit round
 * 3, findings 1 and 2). Every identity is verified account-wide in SES, so the per-Organization
 * sender check is the only wall between tenants: `Sender: ceo@beta.test` or `Resent-From` would
 * let one Organization put another's address where mail clients show it; `X-SES-*` would steer
 * SES itself (another configuration set, message tags, an identity's ARN); authentication
 * results and ARC seals would vouch for checks nobody made.
 */
const IMPERSONATING_HEADERS = new Set(['sender', 'authentication-results', 'domainkey-signature']);
const IMPERSONATING_PREFIXES = ['resent-', 'x-ses-', 'arc-'];

type ReservedHeader = 'written' | 'impersonating' | undefined;
function reservedHeader(lowerName: string): ReservedHeader {
  if (WRITTEN_HEADERS.has(lowerName) || lowerName.startsWith('content-')) return 'written';
  if (IMPERSONATING_HEADERS.has(lowerName) || IMPERSONATING_PREFIXES.some((prefix) => lowerName.startsWith(prefix))) return 'impersonating';
  return undefined;
}

/** RFC 5322 field name: printable ASCII except the colon. */
const FIELD_NAME = /^[\x21-\x39\x3b-\x7e]+$/;
/** Amazon SES's message-tag rule, for names and values alike. */
const TAG_TEXT = /^[A-Za-z0-9_-]{1,256}$/;

/** RFC 2045 `type/subtype` tokens, no parameters. */
const MEDIA_TYPE = /^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+$/;
/** RFC 2392's content id without its angle brackets: printable ASCII, no space, `<`, `>` or quote. */
const CONTENT_ID = /^[\x21\x23-\x3b\x3d\x3f-\x7e]+$/;
/** RFC 4648 standard base64's alphabet, padding only at the end (a plain loop: files run to megabytes). */
const BASE64_TEXT = /^[A-Za-z0-9+/]*={0,2}$/;
/**
 * A file's content type must be a leaf: a `multipart/*` part holds parts of its own, which the
 * composed MIME would carry without them (the file silently lost), and `message/*` would put the
 * client's bytes into the MIME unencoded (security audit round 3, finding 8).
 */
const CONTAINER_TYPE = /^(multipart|message)\//i;

export type MessageContent = Pick<OutgoingEmail, 'replyTo' | 'headers' | 'tags' | 'attachments'>;

/**
 * Strict base64: the alphabet, whole quanta, padding only at the end, no line breaks, and the
 * unused bits of the last quantum zero (one quantum decoded again), so every accepted string means
 * exactly one file.
 */
export function isStrictBase64(content: string): boolean {
  if (content.length % 4 !== 0 || !BASE64_TEXT.test(content)) return false;
  const last = content.slice(-4);
  return Buffer.from(last, 'base64').toString('base64') === last;
}

function validateReplyTo(value: unknown, pointer: string, problems: ProblemList): string[] | undefined {
  if (!Array.isArray(value) || value.length === 0 || value.length > LIMITS.replyTo) {
    problems.add(pointer, `must be an array of 1 to ${LIMITS.replyTo} email addresses`);
    return undefined;
  }
  const addresses: string[] = [];
  value.forEach((entry, i) => {
    const address = textField(entry, `${pointer}/${i}`, problems, 'must be a string (an email address)');
    if (address === undefined) return;
    const parsed = parseEmailAddress(address);
    if (parsed) addresses.push(parsed.ascii);
    else problems.add(`${pointer}/${i}`, 'not a valid email address');
  });
  return addresses;
}

function validateHeaders(value: unknown, pointer: string, problems: ProblemList): CustomHeader[] | undefined {
  if (!isObject(value)) {
    problems.add(pointer, 'must be an object of header field names to values');
    return undefined;
  }
  const names = Object.keys(value);
  if (names.length > LIMITS.headers) {
    problems.add(pointer, `${names.length} header fields; at most ${LIMITS.headers} are allowed`);
    return undefined;
  }
  const seen = new Map<string, string>();
  const headers: CustomHeader[] = [];
  for (const name of names) {
    const at = `${pointer}/${escapePointer(name)}`;
    const lower = name.toLowerCase();
    if (name.length === 0 || name.length > LIMITS.headerName || !FIELD_NAME.test(name)) {
      problems.add(at, `not a header field name: 1 to ${LIMITS.headerName} printable ASCII characters, no colon or space`);
    } else if (reservedHeader(lower) === 'written') {
      problems.add(at, `"${name}" is written by the service itself and cannot be set (nor any Content-* field)`);
    } else if (reservedHeader(lower) === 'impersonating') {
      problems.add(at, `"${name}" names a sender or instructs a mail system and cannot be set (nor any Resent-*, X-SES-* or ARC-* field)`);
    } else if (seen.has(lower)) {
      problems.add(at, `the same field as "${seen.get(lower)}" (header names are case-insensitive)`);
    }
    seen.set(lower, name);
    const text = textField(value[name], at, problems, 'must be a string');
    if (text === undefined) continue;
    if (text === '') problems.add(at, 'must not be empty');
    else if (CONTROL_CHARACTERS.test(text)) problems.add(at, 'must not contain CR, LF or other control characters');
    else if (codePointLength(text) > LIMITS.headerValue) problems.add(at, `must be at most ${LIMITS.headerValue} characters`);
    else if (!isFreeTextHeader(name) && UNFOLDABLE_RUN.test(text)) problems.add(at, 'holds 998 characters without a space: a header line folds only at spaces, so it could not be sent (only X-* and Comments fields are encoded to fit)');
    else headers.push({ name, value: text });
  }
  return headers;
}

function validateTags(value: unknown, pointer: string, problems: ProblemList): Record<string, string> | undefined {
  if (!isObject(value)) {
    problems.add(pointer, 'must be an object of tag names to values');
    return undefined;
  }
  const names = Object.keys(value);
  if (names.length > LIMITS.tags) {
    problems.add(pointer, `${names.length} tags; at most ${LIMITS.tags} are allowed`);
    return undefined;
  }
  // No prototype: a tag named "__proto__" is a tag like any other, not a silently dropped assignment.
  const tags: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const name of names) {
    const at = `${pointer}/${escapePointer(name)}`;
    const tag = value[name];
    if (!TAG_TEXT.test(name)) problems.add(at, `tag names are 1 to ${LIMITS.tag} ASCII letters, digits, "_" or "-"`);
    else if (isServiceTag(name)) problems.add(at, `"${name}" is a tag the service sets itself`);
    // SES would take it, but no JavaScript object (nor the DynamoDB mapping the status answer and
    // schedules are read through) keeps "__proto__" as a key: it could not be echoed back.
    else if (name === '__proto__') problems.add(at, '"__proto__" cannot be echoed back in the status answer and webhooks; choose another name');
    else if (typeof tag !== 'string' || !TAG_TEXT.test(tag)) problems.add(at, `tag values are 1 to ${LIMITS.tag} ASCII letters, digits, "_" or "-"`);
    else tags[name] = tag;
  }
  return tags;
}

const ATTACHMENT_FIELDS = new Set(['FileName', 'Content', 'ContentType', 'ContentId']);

function validateAttachment(value: unknown, pointer: string, problems: ProblemList, contentIds: Set<string>): OutgoingAttachment | undefined {
  if (!isObject(value)) {
    problems.add(pointer, 'must be an attachment object with FileName and Content');
    return undefined;
  }
  const before = problems.count;
  unknownFields(value, ATTACHMENT_FIELDS, pointer, problems);
  const fileName = requiredText(value, 'FileName', pointer, problems);
  if (fileName !== undefined) {
    if (fileName === '' || codePointLength(fileName) > LIMITS.fileName) problems.add(`${pointer}/FileName`, `must be 1 to ${LIMITS.fileName} characters`);
    else {
      const refusal = fileNameRefusal(fileName);
      if (refusal) problems.add(`${pointer}/FileName`, refusal);
    }
  }
  const content = requiredText(value, 'Content', pointer, problems);
  if (content !== undefined) {
    if (content === '') problems.add(`${pointer}/Content`, 'must not be empty: the base64 of the file');
    else if (!isStrictBase64(content)) problems.add(`${pointer}/Content`, 'not valid standard base64 (A-Z, a-z, 0-9, "+", "/", "=" padding; no line breaks)');
  }
  const contentType = optionalText(value, 'ContentType', pointer, problems);
  if (contentType !== undefined && (contentType.length > LIMITS.contentType || !MEDIA_TYPE.test(contentType))) {
    problems.add(`${pointer}/ContentType`, `must be a media type "type/subtype" without parameters, at most ${LIMITS.contentType} characters`);
  } else if (contentType !== undefined && CONTAINER_TYPE.test(contentType)) {
    problems.add(`${pointer}/ContentType`, 'must not be multipart/* or message/*: an attachment is one file, not a container of MIME parts');
  }
  const contentId = optionalText(value, 'ContentId', pointer, problems);
  if (contentId !== undefined) {
    if (contentId.length > LIMITS.contentId || !CONTENT_ID.test(contentId)) {
      problems.add(`${pointer}/ContentId`, `must be 1 to ${LIMITS.contentId} printable ASCII characters without spaces, quotes or angle brackets`);
    } else if (contentIds.has(contentId)) problems.add(`${pointer}/ContentId`, 'another attachment of this message has the same ContentId');
    contentIds.add(contentId);
  }
  if (problems.count > before || fileName === undefined || content === undefined) return undefined;
  return {
    fileName,
    content,
    contentType: contentType?.toLowerCase() ?? defaultContentType(fileName),
    ...(contentId !== undefined && { contentId }),
  };
}

/** The type the file name's extension suggests; never a container (`mail.eml` would be message/rfc822). */
function defaultContentType(fileName: string): string {
  const detected = contentTypeOf(fileName);
  return CONTAINER_TYPE.test(detected) ? 'application/octet-stream' : detected;
}

function requiredText(object: Json, field: string, base: string, problems: ProblemList): string | undefined {
  const value = own(object, field);
  if (value === undefined || value === null) {
    problems.add(`${base}/${field}`, 'required');
    return undefined;
  }
  return textField(value, `${base}/${field}`, problems);
}

function optionalText(object: Json, field: string, base: string, problems: ProblemList): string | undefined {
  const value = own(object, field);
  return value === undefined || value === null ? undefined : textField(value, `${base}/${field}`, problems);
}

function validateAttachments(value: unknown, pointer: string, problems: ProblemList): OutgoingAttachment[] | undefined {
  if (!Array.isArray(value) || value.length > LIMITS.attachments) {
    problems.add(pointer, `must be an array of at most ${LIMITS.attachments} attachments`);
    return undefined;
  }
  const contentIds = new Set<string>();
  const attachments: OutgoingAttachment[] = [];
  value.forEach((entry, i) => {
    const attachment = validateAttachment(entry, `${pointer}/${i}`, problems, contentIds);
    if (attachment) attachments.push(attachment);
  });
  return attachments;
}

const nonEmpty = <T extends object>(value: T | undefined): T | undefined =>
  value === undefined || (Array.isArray(value) ? value.length === 0 : Object.keys(value).length === 0) ? undefined : value;

/**
 * The section 12 fields of one message (`base` is its pointer). Absent, null or empty ones are
 * left out, so a message without them is exactly what it was before they existed.
 */
export function validateMessageContent(message: Json, base: string, problems: ProblemList): MessageContent {
  const given = (field: string) => own(message, field) ?? undefined;
  const [replyTo, headers, tags, attachments] = [
    given('ReplyTo') === undefined ? undefined : validateReplyTo(given('ReplyTo'), `${base}/ReplyTo`, problems),
    given('Headers') === undefined ? undefined : nonEmpty(validateHeaders(given('Headers'), `${base}/Headers`, problems)),
    given('Tags') === undefined ? undefined : nonEmpty(validateTags(given('Tags'), `${base}/Tags`, problems)),
    given('Attachments') === undefined ? undefined : nonEmpty(validateAttachments(given('Attachments'), `${base}/Attachments`, problems)),
  ];
  return {
    ...(replyTo && { replyTo }),
    ...(headers && { headers }),
    ...(tags && { tags }),
    ...(attachments && { attachments }),
  };
}
