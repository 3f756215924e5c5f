/**
 * What a webhook says (CONTRACT section 10; `webhooks` in openapi.json): one POST per recorded
 * event, in the Standard Webhooks shape `{ type, timestamp, data }`, `data` telling the same as
 * the status API would for the recipients the event moved. The webhook id is the event's own
 * stable id, so a receiver can drop a repeat (delivery is at least once).
 */
import { randomBytes } from 'node:crypto';
import { templateView } from '../templates/template-rules';
import type { DeliveryStatus } from '../delivery/recipient-state';
import type { DeliveryEvent, EngagementEvent, EngagementEventType, RecipientChange } from '../delivery/ses-event';

export const WEBHOOK_EVENT_TYPES: Record<DeliveryStatus, string> = {
  Sent: 'email.sent',
  Delayed: 'email.delayed',
  Delivered: 'email.delivered',
  Rejected: 'email.rejected',
  Bounced: 'email.bounced',
  Complained: 'email.complained',
};

/** Opens and clicks (CONTRACT section 17): they move no status, so they are named by the event itself. */
const ENGAGEMENT_WEBHOOK_TYPES: Record<EngagementEventType, string> = { Open: 'email.opened', Click: 'email.clicked' };

/** One delivery to make: queued by the events function, made (and retried) by the delivery function. */
export interface WebhookJob {
  readonly organizationId: string;
  /** `webhook-id`: the same for every attempt, and for SES's duplicates of the event. */
  readonly webhookId: string;
  /** The JSON body, exactly as signed and sent. */
  readonly payload: string;
}

/** A recipient as the status API and webhooks show it. */
export function recipientView(recipient: Pick<RecipientChange, 'address' | 'status' | 'at' | 'detail'>) {
  return { Address: recipient.address, Status: recipient.status, At: recipient.at, Detail: recipient.detail };
}

/** Which message an event is about: its Organization, its SES id, and the schedule it was sent for. */
const messageOf = (event: DeliveryEvent | EngagementEvent) => ({ OrganizationId: event.organizationId, MessageId: event.messageId, ...(event.scheduleId && { ScheduleId: event.scheduleId }) });

export function webhookJob(event: DeliveryEvent, recipients: readonly RecipientChange[]): WebhookJob {
  const payload = {
    type: WEBHOOK_EVENT_TYPES[event.status],
    timestamp: event.at,
    data: {
      ...messageOf(event),
      Status: event.status,
      Recipients: recipients.map(recipientView),
      Tags: event.tags,
      ...templateView(event.template),
      ...(event.test && { Test: true }),
    },
  };
  return { organizationId: event.organizationId, webhookId: `msg_${event.id}`, payload: JSON.stringify(payload) };
}

/**
 * `email.opened` / `email.clicked`: who (`Recipient` is null when the message had several: SES
 * does not say which of them), when, with what, and whether a machine did it (delivery/machine-opens.ts).
 */
export function engagementWebhookJob(event: EngagementEvent, machine: boolean): WebhookJob {
  const payload = {
    type: ENGAGEMENT_WEBHOOK_TYPES[event.type],
    timestamp: event.at,
    data: {
      ...messageOf(event),
      Recipient: event.recipient ?? null,
      At: event.at,
      ...(event.type === 'Click' && { Url: event.url ?? '' }),
      UserAgent: event.userAgent,
      Machine: machine,
      Tags: event.tags,
      ...templateView(event.template),
    },
  };
  return { organizationId: event.organizationId, webhookId: `msg_${event.id}`, payload: JSON.stringify(payload) };
}

/** `organization.paused` (CONTRACT section 11 item 3): sent once, by whoever recorded the pause. */
export function pausedWebhookJob(organizationId: string, pause: { readonly at: string; readonly reason: string }): WebhookJob {
  const payload = { type: 'organization.paused', timestamp: pause.at, data: { OrganizationId: organizationId, PausedAt: pause.at, Reason: pause.reason } };
  return { organizationId, webhookId: `org_paused_${organizationId}_${Date.parse(pause.at)}`, payload: JSON.stringify(payload) };
}

/** A new signing secret in the Standard Webhooks form: `whsec_` and 32 random bytes in base64. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
