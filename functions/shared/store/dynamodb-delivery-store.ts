/**
 * Recorded delivery states, one item per SES message (`MSG#<messageId>`), one attribute per
 * recipient (`r:<address>`: status, time, detail, the order number and the event id). Every write
 * is conditional on the rule of recipient-state.ts, so a late, repeated or out-of-order event can
 * never move a recipient backwards, whichever function instance writes it and in whatever order:
 *
 *   attribute_not_exists(r) OR r.o < :o OR (r.o = :o AND r.e < :e)
 *
 * An event about several recipients is first tried as one write holding every recipient's
 * condition (the common case: nothing recorded yet, one write); if any condition fails, each
 * recipient is written on its own, so the others still move on.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DeliveryStatus, RecipientState } from '../delivery/recipient-state';
import { DELIVERY_STATUSES, orderOf } from '../delivery/recipient-state';
import type { DeliveryEvent, RecipientChange } from '../delivery/ses-event';
import { batchGetAll } from './batch-get';
import type { Engagement } from './dynamodb-engagement-store';
import { readEngagement } from './dynamodb-engagement-store';
import { unlessConditionFails } from './conditions';
import { itemKey } from './table';
import type { TemplateReference } from '../templates/template-rules';
import { readTemplateReference } from '../templates/template-rules';

const RECIPIENT_PREFIX = 'r:';

/** What is recorded of one message. */
export interface StoredMessage {
  readonly messageId: string;
  readonly organizationId: string;
  /** By address, in no particular order. */
  readonly recipients: readonly (RecipientState & { readonly address: string })[];
  /** The client's message tags, as the first recorded event carried them. */
  readonly tags: Readonly<Record<string, string>>;
  /** The template version the message was rendered from, when it was. */
  readonly template?: TemplateReference;
  /** Its opens and clicks (dynamodb-engagement-store.ts). */
  readonly engagement: Engagement;
}

export interface DeliveryStore {
  /**
   * Records the event's recipients and returns those whose recorded state is now this event's:
   * changed by this call, or by an earlier delivery of the very same event (so a retry after a
   * crash still hands them on, with the same event id; see the events function).
   */
  record(event: DeliveryEvent, expiresAt: number): Promise<RecipientChange[]>;
  /** The messages that have a record, by id; ids without one are absent. */
  read(messageIds: readonly string[]): Promise<Map<string, StoredMessage>>;
}

type Item = Record<string, unknown>;

function toState(value: unknown): RecipientState | undefined {
  const v = value as Item | null;
  if (typeof v !== 'object' || v === null || !(DELIVERY_STATUSES as readonly unknown[]).includes(v.s)) return undefined;
  return { status: v.s as DeliveryStatus, at: String(v.at), detail: typeof v.d === 'string' ? v.d : null, eventId: String(v.e) };
}

export class DynamoDbDeliveryStore implements DeliveryStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async record(event: DeliveryEvent, expiresAt: number): Promise<RecipientChange[]> {
    const { recipients } = event;
    if (recipients.length === 0) return [];
    if (recipients.length > 1 && (await this.write(event, recipients, expiresAt))) return [...recipients];
    const written = await Promise.all(recipients.map((recipient) => this.write(event, [recipient], expiresAt)));
    const changed = recipients.filter((_, i) => written[i]);
    const refused = recipients.filter((_, i) => !written[i]);
    if (refused.length === 0) return changed;
    // Refused: a later state is recorded, or this very event is (a redelivery). Only the latter is handed on.
    const { Item } = await this.client.send(new GetCommand({ TableName: this.tableName, Key: itemKey.message(event.messageId), ConsistentRead: true }));
    const again = refused.filter((recipient) => toState(Item?.[`${RECIPIENT_PREFIX}${recipient.address}`])?.eventId === event.id);
    return [...changed, ...again];
  }

  /** One conditional write for these recipients; false when a condition failed (nothing written). */
  private write(event: DeliveryEvent, recipients: readonly RecipientChange[], expiresAt: number): Promise<boolean> {
    const names: Record<string, string> = {};
    const values: Item = { ':org': event.organizationId, ':expires': expiresAt, ':e': event.id, ':o': orderOf(event) };
    const sets = ['organizationId = if_not_exists(organizationId, :org)', 'expiresAt = :expires'];
    // Every event of a message carries the same tags; the first one recorded keeps them.
    if (Object.keys(event.tags).length > 0) {
      values[':tags'] = event.tags;
      sets.push('tags = if_not_exists(tags, :tags)');
    }
    if (event.template) {
      values[':template'] = { name: event.template.name, version: event.template.version };
      sets.push('template = if_not_exists(template, :template)');
    }
    // An item of another Organization is never touched (it cannot happen: the tag is the service's own).
    const conditions = ['(attribute_not_exists(organizationId) OR organizationId = :org)'];
    recipients.forEach((recipient, i) => {
      names[`#r${i}`] = `${RECIPIENT_PREFIX}${recipient.address}`;
      values[`:s${i}`] = { s: recipient.status, at: recipient.at, d: recipient.detail, o: orderOf(recipient), e: recipient.eventId };
      sets.push(`#r${i} = :s${i}`);
      conditions.push(`(attribute_not_exists(#r${i}) OR #r${i}.o < :o OR (#r${i}.o = :o AND #r${i}.e < :e))`);
    });
    return unlessConditionFails(() =>
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: itemKey.message(event.messageId),
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: conditions.join(' AND '),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      ),
    );
  }

  async read(messageIds: readonly string[]): Promise<Map<string, StoredMessage>> {
    const found = new Map<string, StoredMessage>();
    const unique = [...new Set(messageIds)];
    if (unique.length === 0) return found;
    // Whole items: the recipients' attribute names are not known in advance, so nothing is projected.
    const items = await batchGetAll(this.client, this.tableName, unique.map(itemKey.message), {});
    for (const item of items) {
      const messageId = String(item.pk).slice('MSG#'.length);
      const recipients = Object.entries(item).flatMap(([name, value]) => {
        const state = name.startsWith(RECIPIENT_PREFIX) ? toState(value) : undefined;
        return state ? [{ ...state, address: name.slice(RECIPIENT_PREFIX.length) }] : [];
      });
      const tags = typeof item.tags === 'object' && item.tags !== null ? (item.tags as Record<string, string>) : {};
      const template = readTemplateReference(item.template);
      found.set(messageId, { messageId, organizationId: String(item.organizationId), recipients, tags, ...(template && { template }), engagement: readEngagement(item) });
    }
    return found;
  }
}
