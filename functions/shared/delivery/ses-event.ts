/**
 * Amazon SES event publishing records, as the configuration set's EventBridge destination
 * delivers them (`source: aws.ses`, `detail-type: "Email Bounced"` …, the SES record in
 * `detail`), read into what the service records: which message, which Organization (the
 * `OrganizationId` message tag the send path puts on every message), and the state each
 * recipient moves to. The shapes are those of the SES developer guide ("Examples of event data
 * that Amazon SES publishes").
 *
 * Unknown fields are ignored and missing optional ones tolerated; an event without a message id
 * or the Organization tag is not ours to record and reads as undefined.
 */
import { createHash } from 'node:crypto';
import { isTestMessageId } from '../domain/test-mode';
import { isServiceTag, ORGANIZATION_TAG, SCHEDULE_TAG, TEMPLATE_TAGS } from '../mail/ses-message';
import { isCanonicalUuid } from '../domain/uuid';
import type { TemplateReference } from '../templates/template-rules';
import { readTemplateReference } from '../templates/template-rules';
import type { DeliveryStatus, RecipientState } from './recipient-state';

/** SES's `eventType` values the service records (subscription events are not). */
export const RECORDED_EVENT_TYPES = ['Send', 'Delivery', 'Bounce', 'Complaint', 'Reject', 'DeliveryDelay', 'Rendering Failure', 'Open', 'Click'] as const;
export type SesEventType = (typeof RECORDED_EVENT_TYPES)[number];
/** Opens and clicks say what a reader did, not where the message is: they never move a recipient's delivery state. */
export const ENGAGEMENT_EVENT_TYPES = ['Open', 'Click'] as const;
export type EngagementEventType = (typeof ENGAGEMENT_EVENT_TYPES)[number];
export type DeliveryEventType = Exclude<SesEventType, EngagementEventType>;

/** EventBridge's `detail-type` for each (the rule in the stack matches exactly these). */
export const EVENTBRIDGE_DETAIL_TYPES: Record<SesEventType, string> = {
  Send: 'Email Sent',
  Delivery: 'Email Delivered',
  Bounce: 'Email Bounced',
  Complaint: 'Email Complaint Received',
  Reject: 'Email Rejected',
  DeliveryDelay: 'Email Delivery Delayed',
  'Rendering Failure': 'Email Rendering Failed',
  Open: 'Email Opened',
  Click: 'Email Clicked',
};

export interface RecipientChange extends RecipientState {
  /** Lower-case, as the suppression list and the status API compare addresses. */
  readonly address: string;
}

export interface DeliveryEvent {
  /** Stable across SES's duplicates of the same event: the webhook id and the store's last tie-breaker. */
  readonly id: string;
  readonly type: DeliveryEventType;
  readonly messageId: string;
  readonly organizationId: string;
  /** When it happened (the event's own timestamp; the send time for Send and Reject). */
  readonly at: string;
  readonly status: DeliveryStatus;
  readonly recipients: readonly RecipientChange[];
  /** The client's own message tags (CONTRACT section 12), as SES hands them back with every event. */
  readonly tags: Readonly<Record<string, string>>;
  /** The template version the message was rendered from (CONTRACT section 14), from the service's own tags. */
  readonly template?: TemplateReference;
  /** The schedule it was sent for (CONTRACT section 13), from the service's own tags. */
  readonly scheduleId?: string;
  /** Addresses to put on the Organization's suppression list: permanent bounces and complaints (never for a test message). */
  readonly suppress: { readonly reason: 'Bounce' | 'Complaint'; readonly addresses: readonly string[] } | undefined;
  /** A test-mode message (domain/test-mode.ts): recorded and reported, but never counted in reputation nor suppressed. */
  readonly test: boolean;
}

/**
 * An `Open` or `Click` (SES's `open` / `click` objects). SES does not say which recipient opened
 * or clicked, only which message: the event is the recipient's when the message had exactly one,
 * and the message's alone otherwise.
 */
export interface EngagementEvent {
  /** Stable across SES's duplicates of the same event (the claim that counts it once, and the webhook id). */
  readonly id: string;
  readonly type: EngagementEventType;
  readonly messageId: string;
  readonly organizationId: string;
  /** When the reader opened or clicked (the event's own timestamp). */
  readonly at: string;
  /** When SES accepted the message (`mail.timestamp`): the Activity row's key, and the machine rule's stand-in for a delivery not yet recorded. */
  readonly sentAt: string | undefined;
  /** The message's recipients (lower-case), as `mail.destination` lists them. */
  readonly destination: readonly string[];
  /** The one recipient it is attributed to: set only when the message had exactly one. */
  readonly recipient: string | undefined;
  /** The user agent that fetched the pixel or followed the link ('' when SES gives none). */
  readonly userAgent: string;
  /** The link followed (clicks only): the original URL, as the sender wrote it. */
  readonly url?: string;
  readonly tags: Readonly<Record<string, string>>;
  readonly template?: TemplateReference;
  readonly scheduleId?: string;
  readonly test: boolean;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);
const object = (value: unknown): Json => (isObject(value) ? value : {});
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** `emailAddress` of each entry of a bounced/complained/delayed recipient list (or the entries themselves when they are strings). */
function addressesOf(entries: unknown): string[] {
  return list(entries).flatMap((entry) => {
    const address = typeof entry === 'string' ? entry : text(object(entry).emailAddress);
    return address ? [address.toLowerCase()] : [];
  });
}

function tagOf(mail: Json, name: string): string | undefined {
  return text(list(object(mail.tags)[name])[0]);
}

/**
 * The client's tags among the event's: SES adds its own (`ses:…`, a name no client can give, as a
 * tag name cannot hold a colon) and the service its own (`OrganizationId`); the rest are the client's.
 */
function clientTagsOf(mail: Json): Record<string, string> {
  const tags: Record<string, string> = {};
  for (const [name, values] of Object.entries(object(mail.tags))) {
    const value = text(list(values)[0]);
    if (value !== undefined && !name.includes(':') && !isServiceTag(name)) tags[name] = value;
  }
  return tags;
}

/** What the service's own tags say about the message: the template version, the schedule it was sent for. */
function serviceTagsOf(mail: Json): { template?: TemplateReference; scheduleId?: string } {
  const template = readTemplateReference({ name: tagOf(mail, TEMPLATE_TAGS.name), version: tagOf(mail, TEMPLATE_TAGS.version) });
  const scheduleId = tagOf(mail, SCHEDULE_TAG);
  return { ...(template && { template }), ...(isCanonicalUuid(scheduleId) && scheduleId === scheduleId.toLowerCase() && { scheduleId }) };
}

interface Reading {
  readonly status: DeliveryStatus;
  readonly at: string | undefined;
  readonly recipients: string[];
  readonly detail: string | null;
  readonly feedbackId?: string | undefined;
  readonly suppress?: 'Bounce' | 'Complaint';
}

/** What each event type says: the status, its time, whom it concerns, and the detail worth keeping. */
function read(type: DeliveryEventType, record: Json, destination: string[]): Reading {
  switch (type) {
    case 'Send':
      return { status: 'Sent', at: undefined, recipients: destination, detail: null };
    case 'Delivery': {
      const delivery = object(record.delivery);
      const recipients = addressesOf(delivery.recipients);
      return { status: 'Delivered', at: text(delivery.timestamp), recipients: recipients.length > 0 ? recipients : destination, detail: null };
    }
    case 'Bounce': {
      const bounce = object(record.bounce);
      const bounceType = text(bounce.bounceType) ?? 'Undetermined';
      const subType = text(bounce.bounceSubType);
      return {
        status: 'Bounced',
        at: text(bounce.timestamp),
        recipients: addressesOf(bounce.bouncedRecipients),
        detail: subType ? `${bounceType}/${subType}` : bounceType,
        feedbackId: text(bounce.feedbackId),
        ...(bounceType === 'Permanent' && { suppress: 'Bounce' as const }),
      };
    }
    case 'Complaint': {
      const complaint = object(record.complaint);
      const recipients = addressesOf(complaint.complainedRecipients);
      return {
        status: 'Complained',
        at: text(complaint.timestamp),
        recipients: recipients.length > 0 ? recipients : destination,
        detail: text(complaint.complaintFeedbackType) ?? null,
        feedbackId: text(complaint.feedbackId),
        suppress: 'Complaint',
      };
    }
    case 'Reject':
      return { status: 'Rejected', at: undefined, recipients: destination, detail: text(object(record.reject).reason) ?? null };
    case 'DeliveryDelay': {
      const delay = object(record.deliveryDelay);
      const recipients = addressesOf(delay.delayedRecipients);
      return { status: 'Delayed', at: text(delay.timestamp), recipients: recipients.length > 0 ? recipients : destination, detail: text(delay.delayType) ?? null };
    }
    case 'Rendering Failure':
      return { status: 'Rejected', at: undefined, recipients: destination, detail: `RenderingFailure: ${text(object(record.failure).errorMessage) ?? 'unknown'}`.slice(0, 300) };
  }
}

const isEngagementType = (type: unknown): type is EngagementEventType => (ENGAGEMENT_EVENT_TYPES as readonly unknown[]).includes(type);

/** The SES record, its type, message and Organization; undefined when it is not one the service records. */
function recordOf(input: unknown): { envelope: Json; record: Json; mail: Json; type: SesEventType; messageId: string; organizationId: string } | undefined {
  const envelope = object(input);
  const record = isObject(envelope.detail) ? envelope.detail : envelope;
  const type = (RECORDED_EVENT_TYPES as readonly unknown[]).includes(record.eventType) ? (record.eventType as SesEventType) : undefined;
  const mail = object(record.mail);
  const messageId = text(mail.messageId);
  const organizationId = tagOf(mail, ORGANIZATION_TAG)?.toLowerCase();
  return type && messageId && organizationId ? { envelope, record, mail, type, messageId, organizationId } : undefined;
}

/** SES may publish an event twice, each time in a new EventBridge envelope; what it says is the same. */
const idOf = (parts: readonly string[]) => createHash('sha256').update(parts.join('\n')).digest('base64url').slice(0, 32);

/**
 * The SES record of an EventBridge event (or an SES record itself) that moves recipients' delivery
 * state; undefined when it is not one the service records, or is an open or click (see
 * `parseEngagementEvent`).
 */
export function parseSesEvent(input: unknown): DeliveryEvent | undefined {
  const found = recordOf(input);
  if (!found || isEngagementType(found.type)) return undefined;
  const { envelope, record, mail, type, messageId, organizationId } = found;

  const reading = read(type, record, addressesOf(mail.destination));
  const at = reading.at ?? text(mail.timestamp) ?? text(envelope.time) ?? new Date(0).toISOString();
  const recipients = [...new Set(reading.recipients)];
  const id = idOf([messageId, type, at, reading.feedbackId ?? '', recipients.join(',')]);
  return {
    id,
    type,
    messageId,
    organizationId,
    at,
    status: reading.status,
    recipients: recipients.map((address) => ({ address, status: reading.status, at, detail: reading.detail, eventId: id })),
    tags: clientTagsOf(mail),
    ...serviceTagsOf(mail),
    suppress: reading.suppress && recipients.length > 0 && !isTestMessageId(messageId) ? { reason: reading.suppress, addresses: recipients } : undefined,
    test: isTestMessageId(messageId),
  };
}

/** An `Open` or `Click` record (EventBridge-wrapped or bare); undefined for any other. */
export function parseEngagementEvent(input: unknown): EngagementEvent | undefined {
  const found = recordOf(input);
  if (!found || !isEngagementType(found.type)) return undefined;
  const { envelope, record, mail, type, messageId, organizationId } = found;
  const detail = object(type === 'Open' ? record.open : record.click);
  const given = Date.parse(text(detail.timestamp) ?? text(envelope.time) ?? text(mail.timestamp) ?? '');
  // One form, so that times compare as strings in the store (the earliest open is kept).
  const at = new Date(Number.isFinite(given) ? given : 0).toISOString();
  const sent = Date.parse(text(mail.timestamp) ?? '');
  const userAgent = text(detail.userAgent) ?? '';
  const url = type === 'Click' ? text(detail.link) : undefined;
  const destination = [...new Set(addressesOf(mail.destination))];
  return {
    // Two reads by the same agent from the same address at the same millisecond are one event.
    id: idOf([messageId, type, at, userAgent, text(detail.ipAddress) ?? '', url ?? '']),
    type,
    messageId,
    organizationId,
    at,
    sentAt: Number.isFinite(sent) ? new Date(sent).toISOString() : undefined,
    destination,
    recipient: destination.length === 1 ? destination[0] : undefined,
    userAgent,
    ...(url !== undefined && { url }),
    tags: clientTagsOf(mail),
    ...serviceTagsOf(mail),
    test: isTestMessageId(messageId),
  };
}
