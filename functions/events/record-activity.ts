/**
 * The settings page's Activity rows (store/dynamodb-activity-store.ts), kept from the delivery
 * events: after an event moved a recipient on, the message's row is written again with the
 * status the status API would now answer (delivery/recipient-state.ts `messageStatus`), computed
 * from every recipient's recorded state. What a row shows besides (sender, recipients, subject,
 * send time) comes from the event's `mail` object, which SES puts in every event, so the first
 * event to arrive, whichever it is, makes the row.
 */
import { messageStatus, orderOf } from '../shared/delivery/recipient-state';
import type { DeliveryEvent } from '../shared/delivery/ses-event';
import type { DynamoDbActivityStore } from '../shared/store/dynamodb-activity-store';
import type { DeliveryStore } from '../shared/store/dynamodb-delivery-store';

export interface ActivityDependencies {
  readonly activity: Pick<DynamoDbActivityStore, 'record'>;
  readonly deliveries: Pick<DeliveryStore, 'read'>;
}

type Json = Record<string, unknown>;
const object = (value: unknown): Json => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {});
const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);
const texts = (value: unknown): string[] => (Array.isArray(value) ? value.flatMap((entry) => text(entry) ?? []) : []);
/** `Ada <ada@example.com>` → `ada@example.com`, as the status API keys recipients. */
const bare = (address: string) => (/<([^<>]+)>\s*$/.exec(address)?.[1] ?? address).trim().toLowerCase();

/** The message's row as the event's `mail` describes it, or undefined when it says too little. */
function mailOf(raw: unknown): { sentAt: string; from: string; recipients: string[]; subject: string } | undefined {
  const envelope = object(raw);
  const mail = object(object(envelope.detail).mail ?? envelope.mail);
  const headers = object(mail.commonHeaders);
  const sentAt = text(mail.timestamp);
  if (!sentAt || !Number.isFinite(Date.parse(sentAt))) return undefined;
  return {
    sentAt: new Date(sentAt).toISOString(),
    from: texts(headers.from)[0] ?? text(mail.source) ?? '',
    recipients: [...new Set(texts(mail.destination).map(bare))],
    subject: text(headers.subject) ?? '',
  };
}

/** Writes the row of the event's message; `raw` is the event as it arrived (parsed JSON). */
export async function recordActivity(raw: unknown, event: DeliveryEvent, deps: ActivityDependencies, expiresAt: number): Promise<void> {
  const mail = mailOf(raw);
  if (!mail) return;
  const stored = (await deps.deliveries.read([event.messageId])).get(event.messageId);
  const recipients = stored?.recipients ?? [];
  const status = messageStatus(recipients);
  if (status === 'Unknown') return;
  const version = recipients.reduce((sum, recipient) => sum + orderOf(recipient), 0);
  await deps.activity.record({ messageId: event.messageId, organizationId: event.organizationId, ...mail, status }, version, expiresAt);
}
