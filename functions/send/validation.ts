/**
 * The request body's shape and field rules (CONTRACT section 2). Every problem is collected,
 * each with its JSON pointer, so a client can fix them all in one round; a request with any
 * problem sends nothing.
 */
import type { EmailAddress } from '../shared/domain/email-address';
import { parseEmailAddress } from '../shared/domain/email-address';
import { ValidationProblem } from '../shared/http/problems';
import type { Json } from '../shared/http/body-rules';
import { ILL_FORMED, ProblemList, isObject, own, textField as text, unknownFields, validateOrganizationId } from '../shared/http/body-rules';
import { codePointLength, isWellFormedText } from '../shared/domain/unicode';
import { CONTROL_CHARACTERS, MAX_RECIPIENTS, MAX_SUBJECT_LENGTH } from '../shared/domain/header-safety';
import type { ValidMessage } from '../shared/mail/valid-message';
import { DEFAULTS } from '../shared/runtime/config';
import { parseExpiration, TIME_FORMAT_RULE } from './expiry';
import { CONTENT_FIELDS, validateMessageContent } from './content-fields';
import type { SendAtRules } from './send-at';
import { readSendAt } from './send-at';
import type { TemplateUse } from '../shared/templates/template-rules';
import { TEMPLATE_FIELD } from '../shared/templates/template-rules';
import { WRITTEN_FIELDS, readTemplateUse } from './templated';
import { TRACKING_FIELD, readTrackingChoice } from './tracking';

/** Lists longer than this many times their limit are reported by count only. */
export const OVERSIZED_LIST_FACTOR = 10;
export { MAX_SUBJECT_LENGTH } from '../shared/domain/header-safety';
/** A friendly name longer than this is no name; SES folds the header, but mail clients cut it. */
export const MAX_DISPLAY_NAME_LENGTH = 256;


const TOP_LEVEL_FIELDS = new Set(['OrganizationId', 'organizationId', 'Messages']);
const MESSAGE_FIELDS = new Set(['To', 'Cc', 'Bcc', 'From', 'DisplayName', 'Subject', 'TextContent', 'HtmlContent', 'ExpirationDateTime', 'SendAt', TEMPLATE_FIELD, TRACKING_FIELD, ...CONTENT_FIELDS]);

export interface SendRequest {
  /** Lower-case, for lookups. */
  readonly organizationId: string;
  /** As the client wrote it, echoed in the response. */
  readonly organizationIdAsSent: string;
  readonly messages: readonly ValidMessage[];
}

export interface ValidationLimits extends Partial<SendAtRules> {
  readonly maxMessages: number;
}

/** An optional header-bound string: no control characters that could break or fold the header. */
function headerText(value: unknown, pointer: string, problems: ProblemList): string | undefined {
  if (text(value, pointer, problems) === undefined) return undefined;
  if (CONTROL_CHARACTERS.test(value as string)) {
    problems.add(pointer, 'must not contain CR, LF or other control characters');
    return undefined;
  }
  return value as string;
}

function validateRecipients(message: Json, base: string, problems: ProblemList): Record<'To' | 'Cc' | 'Bcc', string[]> {
  const lists = { To: [] as unknown[], Cc: [] as unknown[], Bcc: [] as unknown[] };
  let notLists = 0;
  for (const field of ['To', 'Cc', 'Bcc'] as const) {
    const value = own(message, field);
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) lists[field] = value;
    else {
      problems.add(`${base}/${field}`, 'must be an array of email addresses');
      notLists++;
    }
  }
  const total = lists.To.length + lists.Cc.length + lists.Bcc.length;
  const result = { To: [] as string[], Cc: [] as string[], Bcc: [] as string[] };
  if (total === 0) {
    // `"To": "ada@example.com"` is one problem, already named, not also a message with no recipient.
    if (notLists === 0) problems.add(`${base}/To`, 'at least one recipient is required in To, Cc or Bcc');
    return result;
  }
  if (total > MAX_RECIPIENTS) {
    problems.add(base, `${total} recipients in To, Cc and Bcc together; at most ${MAX_RECIPIENTS} are allowed`);
    // Past ten times the limit, checking each address would only bury the real problem.
    if (total > MAX_RECIPIENTS * OVERSIZED_LIST_FACTOR) return result;
  }
  for (const field of ['To', 'Cc', 'Bcc'] as const) {
    lists[field].forEach((entry, i) => {
      const pointer = `${base}/${field}/${i}`;
      const value = text(entry, pointer, problems, 'must be a string (an email address)');
      if (value === undefined) return;
      const address = parseEmailAddress(value);
      if (address) result[field].push(address.ascii);
      else problems.add(pointer, 'not a valid email address');
    });
  }
  return result;
}

/** The written content of a message: its subject and bodies. */
function validateWritten(value: Json, base: string, problems: ProblemList): { subject: string | undefined; bodies: Partial<Record<'TextContent' | 'HtmlContent', string>> } {
  let subject: string | undefined;
  const bodies: Partial<Record<'TextContent' | 'HtmlContent', string>> = {};
  const subjectValue = own(value, 'Subject');
  if (subjectValue === undefined || subjectValue === null) problems.add(`${base}/Subject`, 'required');
  else if ((subject = headerText(subjectValue, `${base}/Subject`, problems)) !== undefined) {
    if (subject === '') problems.add(`${base}/Subject`, 'must not be empty');
    else if (codePointLength(subject) > MAX_SUBJECT_LENGTH) problems.add(`${base}/Subject`, `must be at most ${MAX_SUBJECT_LENGTH} characters`);
  }

  let badBodyType = false;
  for (const field of ['TextContent', 'HtmlContent'] as const) {
    const content = own(value, field);
    if (content === undefined || content === null) continue;
    const body = text(content, `${base}/${field}`, problems);
    if (body !== undefined) bodies[field] = body;
    else badBodyType = true;
  }
  if (!bodies.TextContent && !bodies.HtmlContent && !badBodyType) {
    const given = bodies.TextContent !== undefined || bodies.HtmlContent !== undefined;
    problems.add(`${base}/TextContent`, given ? 'TextContent or HtmlContent must not be empty' : 'TextContent or HtmlContent is required');
  }
  return { subject, bodies };
}

function validateMessage(value: unknown, index: number, problems: ProblemList, limits: ValidationLimits): ValidMessage | undefined {
  const base = `/Messages/${index}`;
  if (!isObject(value)) {
    problems.add(base, 'must be a Message object');
    return undefined;
  }
  const before = problems.count;
  unknownFields(value, MESSAGE_FIELDS, base, problems);

  const recipients = validateRecipients(value, base, problems);

  const fromValue = own(value, 'From');
  let from: EmailAddress | undefined;
  if (fromValue === undefined || fromValue === null) problems.add(`${base}/From`, 'required: the sender address');
  else {
    const address = text(fromValue, `${base}/From`, problems, 'must be a string (an email address)');
    if (address !== undefined && !(from = parseEmailAddress(address))) problems.add(`${base}/From`, 'not a valid email address');
  }

  const displayNameValue = own(value, 'DisplayName');
  const displayName = displayNameValue === undefined || displayNameValue === null
    ? undefined
    : headerText(displayNameValue, `${base}/DisplayName`, problems);
  if (displayName !== undefined && codePointLength(displayName) > MAX_DISPLAY_NAME_LENGTH) {
    problems.add(`${base}/DisplayName`, `must be at most ${MAX_DISPLAY_NAME_LENGTH} characters`);
  }

  const templateValue = own(value, TEMPLATE_FIELD) ?? undefined;
  let templateUse: TemplateUse | undefined;
  let subject: string | undefined;
  let bodies: Partial<Record<'TextContent' | 'HtmlContent', string>> = {};
  if (templateValue !== undefined) {
    for (const field of WRITTEN_FIELDS) {
      if ((own(value, field) ?? undefined) !== undefined) problems.add(`${base}/${field}`, `give either Template or Subject, TextContent and HtmlContent, not both`);
    }
    templateUse = readTemplateUse(templateValue, `${base}/${TEMPLATE_FIELD}`, problems);
    subject = '';
  } else ({ subject, bodies } = validateWritten(value, base, problems));

  const expirationValue = own(value, 'ExpirationDateTime');
  let expiresAt: number | undefined;
  if (expirationValue !== undefined && expirationValue !== null) {
    if (typeof expirationValue === 'string' && !isWellFormedText(expirationValue)) problems.add(`${base}/ExpirationDateTime`, ILL_FORMED);
    else if (typeof expirationValue !== 'string' || (expiresAt = parseExpiration(expirationValue)) === undefined) {
      problems.add(`${base}/ExpirationDateTime`, TIME_FORMAT_RULE);
    }
  }

  // ReplyTo, Headers, Tags and Attachments (CONTRACT section 12).
  const content = validateMessageContent(value, base, problems);
  const sendAt = readSendAt(own(value, 'SendAt'), `${base}/SendAt`, problems, expiresAt, { now: limits.now ?? Date.now(), maxScheduleDays: limits.maxScheduleDays ?? DEFAULTS.maxScheduleDays });
  const trackingChoice = readTrackingChoice(own(value, TRACKING_FIELD), `${base}/${TRACKING_FIELD}`, problems);

  if (problems.count > before || !from || subject === undefined) return undefined;
  return {
    index,
    from,
    ...(displayName !== undefined && displayName !== '' && { displayName }),
    to: recipients.To,
    cc: recipients.Cc,
    bcc: recipients.Bcc,
    subject,
    ...(bodies.TextContent && { text: bodies.TextContent }),
    ...(bodies.HtmlContent && { html: bodies.HtmlContent }),
    ...(expiresAt !== undefined && { expiresAt }),
    ...content,
    ...(sendAt !== undefined && { sendAt }),
    ...(templateUse && { templateUse }),
    // Only when given: a request without it keeps the idempotency fingerprint it had before the field existed.
    ...(trackingChoice && { trackingChoice }),
  };
}

/** Validates the whole body; throws a `ValidationProblem` listing every problem found. */
export function validateSendRequest(body: unknown, limits: ValidationLimits): SendRequest {
  const problems = new ProblemList();
  if (!isObject(body)) {
    throw new ValidationProblem([{ pointer: '', detail: 'the body must be a JSON object with OrganizationId and Messages' }]);
  }
  unknownFields(body, TOP_LEVEL_FIELDS, '', problems);
  const organizationId = validateOrganizationId(body, problems);

  const messagesValue = own(body, 'Messages');
  const messages: ValidMessage[] = [];
  if (messagesValue === undefined || messagesValue === null) problems.add('/Messages', 'required: an array of 1 or more messages');
  else if (!Array.isArray(messagesValue)) problems.add('/Messages', 'must be an array of Message objects');
  else if (messagesValue.length === 0) problems.add('/Messages', 'must hold at least 1 message');
  else {
    if (messagesValue.length > limits.maxMessages) {
      problems.add('/Messages', `${messagesValue.length} messages; at most ${limits.maxMessages} are allowed per request`);
    }
    // Every problem is listed, but past ten times the limit checking each message would only
    // bury the real one.
    const checked = messagesValue.length > limits.maxMessages * OVERSIZED_LIST_FACTOR ? [] : messagesValue;
    checked.forEach((message, index) => {
      const valid = validateMessage(message, index, problems, limits);
      if (valid) messages.push(valid);
    });
  }

  if (problems.count > 0 || organizationId === undefined) throw new ValidationProblem(problems.items, { total: problems.count });
  return { organizationId: organizationId.toLowerCase(), organizationIdAsSent: organizationId, messages };
}
