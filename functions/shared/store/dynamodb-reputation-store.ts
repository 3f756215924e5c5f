/**
 * Each Organization's reputation counters and its pause (CONTRACT section 11 item 3), in DynamoDB.
 *
 * Counters: one item per Organization (`REP#<org>`), one number attribute per kind and UTC day
 * (`s:2026-11-23`, `b:…`, `c:…`). An event adds to today's attribute with one atomic ADD that
 * also drops the week of days before the window and answers with the whole item, so the events
 * function judges the Organization from the write it makes anyway. The item's TTL is pushed 8
 * days on by every write: once it lapses, every counter in it is outside the window.
 *
 * Counting each event once without transactions (dynalite has none): before adding, the event's
 * id is claimed on its message's item (`ADD counted :id`, on condition that the set does not hold
 * it yet). A duplicate or a retried event finds its claim and adds nothing. A crash between claim
 * and ADD loses that one event's count, which SQS's retry then skips; that is chosen over the
 * other order, where the retry would count it twice (a spurious pause is worse than a late one).
 *
 * Pause: `pausedAt` and `pausedReason` on the Organization item, which the send path reads
 * anyway (see dynamodb-access-store.ts). Setting it is conditional on there being none, so the
 * one caller that actually paused learns it (and sends the webhook); resuming removes both and
 * drops the counters, so the Organization starts a fresh window.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DeliveryEvent } from '../delivery/ses-event';
import type { CounterKind, DayCounts, Pause, Reputation } from '../domain/reputation';
import { COUNTER_KINDS, WINDOW_DAYS, daysBeforeWindow, summarise, tallyOf, utcDay } from '../domain/reputation';
import { batchGetAll } from './batch-get';
import { unlessConditionFails } from './conditions';
import { readPause } from './organization-pause';
import { PAUSE_ATTRIBUTES, itemKey } from './table';

const PREFIX: Record<CounterKind, string> = { sends: 's:', bounces: 'b:', complaints: 'c:' };
/** On the message item: the ids of its events already counted. */
const COUNTED_ATTRIBUTE = 'counted';
const TTL_SECONDS = (WINDOW_DAYS + 1) * 24 * 60 * 60;

type Item = Record<string, unknown>;

function reputationOf(item: Item | undefined, now: number): Reputation {
  return summarise((day) => {
    const counts: Partial<Record<CounterKind, number>> = {};
    for (const kind of COUNTER_KINDS) counts[kind] = Number(item?.[`${PREFIX[kind]}${day}`] ?? 0);
    return counts as DayCounts;
  }, now);
}

/** What the events function needs: count an event, and pause. */
export interface ReputationCounter {
  /** Counts the event once; the Organization's reputation after it, or undefined when it counts for nothing (or was counted before). */
  count(event: DeliveryEvent, now: number): Promise<Reputation | undefined>;
  pause(organizationId: string, pause: Pause): Promise<boolean>;
}

export class DynamoDbReputationStore implements ReputationCounter {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async count(event: DeliveryEvent, now: number): Promise<Reputation | undefined> {
    const tally = tallyOf(event);
    if (!tally) return undefined;
    const claimed = await unlessConditionFails(() =>
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: itemKey.message(event.messageId),
          UpdateExpression: 'ADD #counted :ids',
          ConditionExpression: 'attribute_not_exists(#counted) OR NOT contains(#counted, :id)',
          ExpressionAttributeNames: { '#counted': COUNTED_ATTRIBUTE },
          ExpressionAttributeValues: { ':ids': new Set([event.id]), ':id': event.id },
        }),
      ),
    );
    if (!claimed) return undefined;

    const stale = daysBeforeWindow(now).flatMap((day) => COUNTER_KINDS.map((kind) => `${PREFIX[kind]}${day}`));
    const counters = COUNTER_KINDS.filter((kind) => (tally[kind] ?? 0) > 0);
    const names: Record<string, string> = { '#ttl': 'expiresAt' };
    const values: Record<string, number> = { ':ttl': Math.floor(now / 1_000) + TTL_SECONDS };
    counters.forEach((kind, i) => {
      names[`#n${i}`] = `${PREFIX[kind]}${utcDay(now)}`;
      values[`:n${i}`] = tally[kind] as number;
    });
    stale.forEach((name, i) => (names[`#x${i}`] = name));
    const { Attributes } = await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: itemKey.reputation(event.organizationId),
        UpdateExpression: `ADD ${counters.map((_, i) => `#n${i} :n${i}`).join(', ')} SET #ttl = :ttl REMOVE ${stale.map((_, i) => `#x${i}`).join(', ')}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
    return reputationOf(Attributes, now);
  }

  async read(organizationId: string, now: number): Promise<Reputation> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.tableName, Key: itemKey.reputation(organizationId), ConsistentRead: true }));
    return reputationOf(Item, now);
  }

  /** Several Organizations' reputations in one BatchGetItem (the settings API's list). */
  async readMany(organizationIds: readonly string[], now: number): Promise<Map<string, Reputation>> {
    const items = await batchGetAll(this.client, this.tableName, organizationIds.map(itemKey.reputation), {});
    const byId = new Map(items.map((item) => [String(item.pk).slice(itemKey.reputation('').pk.length), item]));
    return new Map(organizationIds.map((id) => [id, reputationOf(byId.get(id.toLowerCase()), now)]));
  }

  /** Records the pause unless one is recorded already (or the Organization does not exist); true when this call paused it. */
  pause(organizationId: string, pause: Pause): Promise<boolean> {
    return unlessConditionFails(() =>
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: itemKey.organization(organizationId),
          UpdateExpression: 'SET #at = :at, #reason = :reason',
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(#at)',
          ExpressionAttributeNames: { '#at': PAUSE_ATTRIBUTES.at, '#reason': PAUSE_ATTRIBUTES.reason },
          ExpressionAttributeValues: { ':at': pause.at, ':reason': pause.reason },
        }),
      ),
    );
  }

  /**
   * Lifts the pause and starts a fresh window (the old counts would pause it again at the next
   * event); an Organization that was not paused keeps its counts. Returns the pause lifted, undefined when it was not paused; false when there is no
   * such Organization.
   */
  async resume(organizationId: string): Promise<Pause | undefined | false> {
    let previous: Item | undefined;
    const found = await unlessConditionFails(async () => {
      const { Attributes } = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: itemKey.organization(organizationId),
          UpdateExpression: 'REMOVE #at, #reason',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#at': PAUSE_ATTRIBUTES.at, '#reason': PAUSE_ATTRIBUTES.reason },
          ReturnValues: 'ALL_OLD',
        }),
      );
      previous = Attributes;
    });
    if (!found) return false;
    const lifted = readPause(previous);
    if (lifted) await this.client.send(new DeleteCommand({ TableName: this.tableName, Key: itemKey.reputation(organizationId) }));
    return lifted;
  }
}
