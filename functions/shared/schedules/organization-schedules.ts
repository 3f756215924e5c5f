/**
 * Each Organization's pending scheduled messages (CONTRACT section 11 item 7, section 13 item 5):
 * a count, bounded per Organization, and one small entry per schedule not yet final, in the
 * Organization's own partition of the schedules' prefix (`SCHED#org#<orgId>`, so the functions
 * that may touch schedules may touch these, and nothing more):
 *
 *   PENDING          the count, `pending`
 *   S#<scheduleId>   who made it (user, key hash), when it is due, a summary for the lists
 *
 * The entries answer "which schedules did this key make" (revoke and rotate cancel them),
 * `schedule list` and the settings page's Activity, with one Query instead of a scan.
 *
 * The count is kept an upper bound without transactions (dynalite has none), as the suppression
 * count is: it goes up, conditionally on the bound, *before* an entry is written, and down only
 * *after* an entry is removed. An interruption between the two leaves it one too high, which
 * costs one place under the bound; it never lets an Organization past it.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unlessConditionFails } from '../store/conditions';
import { queryAll } from '../store/query-all';
import { SCHEDULE_PARTITION, itemKey } from '../store/table';

/** What the lists show of a pending schedule, and whose key it belongs to. */
export interface PendingEntry {
  readonly scheduleId: string;
  readonly organizationId: string;
  readonly userId: string;
  /** Absent on schedules made before schedules belonged to their key. */
  readonly keyHash?: string;
  /** Epoch ms of `SendAt`. */
  readonly sendAt: number;
  /** The first few recipients, for a person to recognise the message. */
  readonly recipients: readonly string[];
  readonly subject: string;
  /** Made with a test-mode key (CONTRACT section 15): every list says so. */
  readonly test?: true;
}

type Item = Record<string, unknown>;
/** The sort key of the partition's count of pending schedules. */
export const COUNT_KEY = 'PENDING';
const ENTRY = 'S#';
/** Enough for a person to recognise the message; the schedule itself holds it whole. */
const SUMMARY = { recipients: 5, subject: 200 } as const;

export function organizationSchedulesPartition(organizationId: string): string {
  return `${SCHEDULE_PARTITION}org#${organizationId.toLowerCase()}`;
}

export class OrganizationSchedules {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /**
   * Takes a place for the schedule under `limit`: 'held', 'exists' when its entry is already
   * there (a retried request: the place it took then still counts), or 'full'.
   */
  async hold(entry: PendingEntry, limit: number, expiresAt: number): Promise<'held' | 'exists' | 'full'> {
    if (!(await this.count(entry.organizationId, 1, limit))) return 'full';
    const item: Item = {
      pk: organizationSchedulesPartition(entry.organizationId),
      sk: `${ENTRY}${entry.scheduleId.toLowerCase()}`,
      userId: entry.userId,
      ...(entry.keyHash && { keyHash: entry.keyHash }),
      sendAt: entry.sendAt,
      recipients: entry.recipients.slice(0, SUMMARY.recipients),
      subject: [...entry.subject].slice(0, SUMMARY.subject).join(''),
      ...(entry.test && { test: true }),
      expiresAt,
    };
    const added = await unlessConditionFails(() =>
      this.client.send(new PutCommand({ TableName: this.tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' })),
    );
    if (added) return 'held';
    await this.count(entry.organizationId, -1);
    return 'exists';
  }

  /** Gives the schedule's place back once it is final (sent, cancelled, failed …); idempotent. */
  async release(organizationId: string, scheduleId: string): Promise<void> {
    const removed = await unlessConditionFails(() =>
      this.client.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: { pk: organizationSchedulesPartition(organizationId), sk: `${ENTRY}${scheduleId.toLowerCase()}` },
          ConditionExpression: 'attribute_exists(pk)',
        }),
      ),
    );
    if (removed) await this.count(organizationId, -1);
  }

  /** The Organization's pending schedules, soonest first. */
  async list(organizationId: string): Promise<PendingEntry[]> {
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :entry)',
      ExpressionAttributeValues: { ':pk': organizationSchedulesPartition(organizationId), ':entry': ENTRY },
      ConsistentRead: true,
    });
    const found = items.map((item) => toEntry(organizationId.toLowerCase(), item));
    return found.sort((a, b) => a.sendAt - b.sendAt || a.scheduleId.localeCompare(b.scheduleId));
  }

  /**
   * Moves a schedule to another key (rotate with `--keep-schedules`): the schedule itself, which
   * its firing checks, then its entry. False when it was not on `from`.
   */
  async rekey(organizationId: string, scheduleId: string, from: string, to: string): Promise<boolean> {
    const move = (Key: Item) =>
      unlessConditionFails(() =>
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key,
            UpdateExpression: 'SET keyHash = :to',
            ConditionExpression: 'keyHash = :from',
            ExpressionAttributeValues: { ':from': from, ':to': to },
          }),
        ),
      );
    if (!(await move(itemKey.schedule(scheduleId)))) return false;
    await move({ pk: organizationSchedulesPartition(organizationId), sk: `${ENTRY}${scheduleId.toLowerCase()}` });
    return true;
  }

  /** Moves the count; going up, only while it stays within `limit`. */
  private count(organizationId: string, by: 1 | -1, limit?: number): Promise<boolean> {
    return unlessConditionFails(() =>
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: organizationSchedulesPartition(organizationId), sk: COUNT_KEY },
          UpdateExpression: 'ADD pending :by',
          ...(limit !== undefined && { ConditionExpression: 'attribute_not_exists(pending) OR pending < :limit' }),
          ExpressionAttributeValues: { ':by': by, ...(limit !== undefined && { ':limit': limit }) },
        }),
      ),
    );
  }
}

function toEntry(organizationId: string, item: Item): PendingEntry {
  return {
    scheduleId: String(item.sk).slice(ENTRY.length),
    organizationId,
    userId: String(item.userId),
    ...(typeof item.keyHash === 'string' && { keyHash: item.keyHash }),
    sendAt: Number(item.sendAt),
    recipients: Array.isArray(item.recipients) ? item.recipients.map(String) : [],
    subject: String(item.subject ?? ''),
    ...(item.test === true && { test: true as const }),
  };
}
