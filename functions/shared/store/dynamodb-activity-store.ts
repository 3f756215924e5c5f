/**
 * Each Organization's recent messages, for the settings page's Activity (CONTRACT section 9):
 * written by the events function from SES's own events, read by the settings API, and never
 * touched by the send path (whose round trips stay as they were).
 *
 * Keys, so that one page of one Organization is one Query, newest first:
 *
 *   ACT#<org>              / <sent at ISO>#<messageId>   every message of the Organization
 *   ACTR#<org>#<address>   / <sent at ISO>#<messageId>   the same message, once per recipient
 *
 * Both carry the whole row (time, sender, recipients, subject, status), so a page needs nothing
 * else; a status filter is a FilterExpression on the same Query. The sort key is SES's send time
 * (`mail.timestamp`, the same in every event of a message), so any event of a message, in any
 * order, writes the same items.
 *
 * The status never goes backwards: each write carries `v`, the sum of the recipients' order
 * numbers (delivery/recipient-state.ts) of the message state it was computed from. Those only
 * grow, so a write computed from an older state has a smaller `v` and its condition
 * (`v < :v`) refuses it, whichever instance writes last. Items expire with the message's status
 * (`STATUS_RETENTION_DAYS`).
 *
 * Opens and clicks (docs/tracking.md) are counters on the same rows (`opens`, `clicks`), added to
 * by each counted event. An open may arrive before the event that writes the row: the counter then
 * waits on a row that has nothing else yet (and is not listed) until that event fills it in.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DeliveryStatus } from '../delivery/recipient-state';
import { MAX_RECIPIENTS } from '../domain/header-safety';
import { DELIVERY_STATUSES } from '../delivery/recipient-state';
import { unlessConditionFails } from './conditions';
import { itemKey } from './table';

/** One message as the Activity list shows it. */
export interface ActivityEntry {
  readonly messageId: string;
  readonly organizationId: string;
  /** ISO 8601: when SES accepted it. */
  readonly sentAt: string;
  readonly from: string;
  /** Every recipient (To, Cc, Bcc), lower-case. */
  readonly recipients: readonly string[];
  readonly subject: string;
  readonly status: DeliveryStatus;
  /** Opens by people and clicks recorded (tracked messages; 0 otherwise). */
  readonly opens?: number;
  readonly clicks?: number;
}

/** Where a read of one partition goes on from: the last sort key read, or the start. */
export type ActivityPosition = string | undefined;

export interface ActivityQuery {
  readonly organizationId: string;
  /** Only the messages to this address (lower-case). */
  readonly recipient?: string;
  readonly status?: DeliveryStatus;
  readonly after: ActivityPosition;
  readonly limit: number;
  /** With a status: at most this many Queries (`FILTERED_READS` when not given). */
  readonly reads?: number;
}

/** A status-filtered request reads at most this many Queries in all, of this many entries each (about 250 KB a Query). */
export const FILTERED_READS = 10;
export const FILTERED_READ_ITEMS = 500;

export interface ActivityPage {
  readonly entries: ActivityEntry[];
  /** The sort key of each entry, in order, so a caller merging partitions can resume after any of them. */
  readonly positions: string[];
  /** Where the next read goes on from, or undefined when the partition is read to its end. */
  readonly next: ActivityPosition;
}

type Item = Record<string, unknown>;

/** Long subjects are cut: the list shows a line, and an item stays small. */
export const MAX_SUBJECT_LENGTH = 300;

export function activitySortKey(sentAt: string, messageId: string): string {
  return `${sentAt}#${messageId}`;
}

function toEntry(item: Item): ActivityEntry | undefined {
  if (!(DELIVERY_STATUSES as readonly unknown[]).includes(item.status) || typeof item.messageId !== 'string') return undefined;
  return {
    messageId: item.messageId,
    organizationId: String(item.organizationId),
    sentAt: String(item.sentAt),
    from: String(item.from ?? ''),
    recipients: Array.isArray(item.recipients) ? item.recipients.map(String) : [],
    subject: String(item.subject ?? ''),
    status: item.status as DeliveryStatus,
    opens: typeof item.opens === 'number' ? item.opens : 0,
    clicks: typeof item.clicks === 'number' ? item.clicks : 0,
  };
}

export class DynamoDbActivityStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /**
   * Records the message's row (and one per recipient) with its status, unless a row computed from
   * a later state (`version`) is already there. Each write stands alone: a retry redoes the rest.
   */
  async record(entry: ActivityEntry, version: number, expiresAt: number): Promise<void> {
    const recipients = [...new Set(entry.recipients)].slice(0, MAX_RECIPIENTS);
    const row: Item = {
      ':m': entry.messageId,
      ':org': entry.organizationId,
      ':at': entry.sentAt,
      ':from': entry.from,
      ':to': recipients,
      ':subject': entry.subject.slice(0, MAX_SUBJECT_LENGTH),
      ':status': entry.status,
      ':v': version,
      ':expires': expiresAt,
    };
    const sortKey = activitySortKey(entry.sentAt, entry.messageId);
    const keys = [itemKey.activity(entry.organizationId, sortKey), ...recipients.map((address) => itemKey.recipientActivity(entry.organizationId, address, sortKey))];
    await Promise.all(
      keys.map((Key) =>
        unlessConditionFails(() =>
          this.client.send(
            new UpdateCommand({
              TableName: this.tableName,
              Key,
              UpdateExpression:
                'SET messageId = :m, organizationId = :org, sentAt = :at, #from = :from, recipients = :to, subject = :subject, #status = :status, v = :v, expiresAt = :expires',
              ConditionExpression: 'attribute_not_exists(v) OR v < :v',
              ExpressionAttributeNames: { '#from': 'from', '#status': 'status' },
              ExpressionAttributeValues: row,
            }),
          ),
        ),
      ),
    );
  }

  /** Adds one open or click to the message's rows (the Organization's, and each recipient's). */
  async count(entry: Pick<ActivityEntry, 'messageId' | 'organizationId' | 'sentAt' | 'recipients'>, what: 'opens' | 'clicks', expiresAt: number): Promise<void> {
    const sortKey = activitySortKey(entry.sentAt, entry.messageId);
    const recipients = [...new Set(entry.recipients)].slice(0, MAX_RECIPIENTS);
    const keys = [itemKey.activity(entry.organizationId, sortKey), ...recipients.map((address) => itemKey.recipientActivity(entry.organizationId, address, sortKey))];
    await Promise.all(
      keys.map((Key) =>
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key,
            UpdateExpression: 'ADD #count :one SET expiresAt = if_not_exists(expiresAt, :expires)',
            ExpressionAttributeNames: { '#count': what },
            ExpressionAttributeValues: { ':one': 1, ':expires': expiresAt },
          }),
        ),
      ),
    );
  }

  /**
   * Up to `limit` rows of one Organization (or of one recipient there) after `after`, newest
   * first: one Query. A status is a filter DynamoDB applies after reading, and a Query's `Limit`
   * counts what it read: a rare status (a bounce among thousands delivered) would come back as
   * empty pages. So a filtered read goes on until it has `limit` matches, or has made `reads`
   * Queries of `FILTERED_READ_ITEMS` rows (then it holds fewer, and `next` says where to go on).
   */
  async page(query: ActivityQuery): Promise<ActivityPage> {
    const pk = query.recipient
      ? itemKey.recipientActivity(query.organizationId, query.recipient, '').pk
      : itemKey.activity(query.organizationId, '').pk;
    const entries: ActivityEntry[] = [];
    const positions: string[] = [];
    let next = query.after;
    for (let read = 0; read < (query.status ? (query.reads ?? FILTERED_READS) : 1) && entries.length < query.limit; read++) {
      const { Items, LastEvaluatedKey } = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': pk, ...(query.status && { ':status': query.status }) },
          ...(query.status && { FilterExpression: '#status = :status', ExpressionAttributeNames: { '#status': 'status' } }),
          ScanIndexForward: false,
          Limit: query.status ? FILTERED_READ_ITEMS : query.limit,
          ...(next && { ExclusiveStartKey: { pk, sk: next } }),
        }),
      );
      for (const item of Items ?? []) {
        const entry = toEntry(item);
        if (!entry) continue;
        entries.push(entry);
        positions.push(String(item.sk));
      }
      next = LastEvaluatedKey ? String(LastEvaluatedKey.sk) : undefined;
      if (!next) break;
    }
    return { entries, positions, next };
  }
}
