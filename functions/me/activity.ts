/**
 * `GET /v1.2/me/messages`: the Activity list (CONTRACT section 9), newest first, 50 a page, of
 * the signed-in user's Organizations only (another Organization, or an unknown one, is a 403 and
 * reads nothing).
 *
 * One Organization's page is one Query (store/dynamodb-activity-store.ts), or with a status
 * filter a few, sharing `FILTERED_READS` Queries between the Organizations read. Without an
 * Organization, each member Organization is queried for a page (in parallel) and the pages are
 * merged by time, as a k-way merge: the cursor then holds, per Organization, the sort key to go on
 * after (the last row of it that was shown, or the end of what its Queries read when all of its
 * rows were shown); an Organization read to its end drops out. A page that stopped at its read
 * budget before it was full holds back every other row older than where it stopped, since its
 * unread rows may be newer than those. No row is shown twice, skipped, or out of order.
 */
import { DELIVERY_STATUSES } from '../shared/delivery/recipient-state';
import type { DeliveryStatus } from '../shared/delivery/recipient-state';
import { parseEmailAddress } from '../shared/domain/email-address';
import { testMark } from '../shared/domain/test-mode';
import type { ActivityEntry, DynamoDbActivityStore } from '../shared/store/dynamodb-activity-store';
import { FILTERED_READS } from '../shared/store/dynamodb-activity-store';
import { withStorageFaults } from '../shared/store/storage-errors';
import type { MemberOrganization } from './organizations';
import { listedOrganizations } from './organizations';
import { InvalidParameterProblem } from './problems';

export const ACTIVITY_PAGE_SIZE = 50;

export interface MessageView {
  readonly MessageId: string;
  readonly OrganizationId: string;
  readonly OrganizationName: string;
  readonly SentAt: string;
  readonly From: string;
  readonly Recipients: readonly string[];
  readonly Subject: string;
  readonly Status: DeliveryStatus;
  /** Opens by people and clicks of a tracked message (docs/tracking.md); 0 for an untracked one. */
  readonly Opens: number;
  readonly Clicks: number;
  /** A test-mode message: nothing reached Amazon SES. */
  readonly Test?: true;
}

export interface MessagesView {
  readonly Messages: readonly MessageView[];
  /** Pass as `cursor` for the next page; null when there is none. */
  readonly Cursor: string | null;
}

type Query = Readonly<Record<string, string | undefined>>;
/** Per Organization id: the sort key to go on after ('' for the start). Absent: read to its end. */
type Positions = Record<string, string>;

const SORT_KEY = /^[0-9T:.Z-]{20,30}#[\x21-\x7e]{1,200}$/;

function decodeCursor(cursor: string, allowed: readonly string[]): Positions {
  try {
    const positions: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (typeof positions !== 'object' || positions === null || Array.isArray(positions)) throw new Error('not an object');
    for (const [id, after] of Object.entries(positions)) {
      if (!allowed.includes(id) || typeof after !== 'string' || (after !== '' && !SORT_KEY.test(after))) throw new Error('not of this list');
    }
    return positions as Positions;
  } catch (error) {
    throw new InvalidParameterProblem('cursor', 'is not a cursor this list gave (it belongs to other filters, or was changed)', { cause: error });
  }
}

const encodeCursor = (positions: Positions) => (Object.keys(positions).length > 0 ? Buffer.from(JSON.stringify(positions), 'utf8').toString('base64url') : null);

function statusOf(query: Query): DeliveryStatus | undefined {
  const status = query.status?.trim();
  if (!status) return undefined;
  if (!(DELIVERY_STATUSES as readonly string[]).includes(status)) throw new InvalidParameterProblem('status', `must be one of ${DELIVERY_STATUSES.join(', ')}`);
  return status as DeliveryStatus;
}

function recipientOf(query: Query): string | undefined {
  const given = query.recipient?.trim();
  if (!given) return undefined;
  const address = parseEmailAddress(given);
  if (!address) throw new InvalidParameterProblem('recipient', 'must be an e-mail address, such as ada@example.com');
  return address.ascii.toLowerCase();
}

export async function listMessages(member: readonly MemberOrganization[], query: Query, activity: Pick<DynamoDbActivityStore, 'page'>): Promise<MessagesView> {
  const status = statusOf(query);
  const recipient = recipientOf(query);
  const targets = listedOrganizations(member, query);
  const ids = targets.map((organization) => organization.id);
  const positions = query.cursor ? decodeCursor(query.cursor, ids) : Object.fromEntries(ids.map((id) => [id, '']));
  const live = ids.filter((id) => id in positions);

  const reads = Math.max(1, Math.floor(FILTERED_READS / Math.max(1, live.length)));
  const pages = await withStorageFaults(() =>
    Promise.all(live.map((id) => activity.page({ organizationId: id, ...(recipient && { recipient }), ...(status && { status }), after: positions[id] || undefined, limit: ACTIVITY_PAGE_SIZE, reads }))),
  );
  // Where the newest of the pages that stopped short (not full, not at the end) stopped: its
  // unread rows are older than that (the row there was read), but may be newer than another
  // Organization's older rows, which wait for a later page.
  const held = pages.reduce<string | undefined>((newest, page) => (page.next !== undefined && page.entries.length < ACTIVITY_PAGE_SIZE && (newest === undefined || page.next > newest) ? page.next : newest), undefined);
  const rows = pages.flatMap((page, p) => page.entries.map((entry, i) => ({ entry, position: page.positions[i]!, p }))).filter((row) => held === undefined || row.position >= held);
  rows.sort((a, b) => (a.position < b.position ? 1 : a.position > b.position ? -1 : a.p - b.p));
  const shown = rows.slice(0, ACTIVITY_PAGE_SIZE);

  const next: Positions = {};
  pages.forEach((page, p) => {
    const id = live[p]!;
    const taken = shown.filter((row) => row.p === p).length;
    if (taken === page.entries.length) {
      if (page.next) next[id] = page.next;
    } else {
      next[id] = taken > 0 ? page.positions[taken - 1]! : positions[id]!;
    }
  });
  const names = new Map(targets.map((organization) => [organization.id, organization.name]));
  return { Messages: shown.map(({ entry }) => view(entry, names.get(entry.organizationId) ?? '')), Cursor: encodeCursor(next) };
}

function view(entry: ActivityEntry, organizationName: string): MessageView {
  return {
    MessageId: entry.messageId,
    OrganizationId: entry.organizationId,
    OrganizationName: organizationName,
    SentAt: entry.sentAt,
    From: entry.from,
    Recipients: entry.recipients,
    Subject: entry.subject,
    Status: entry.status,
    Opens: entry.opens ?? 0,
    Clicks: entry.clicks ?? 0,
    ...testMark(entry.messageId),
  };
}
