/**
 * Opens and clicks (CONTRACT section 17 item 4), on the message's own status item (`MSG#<id>`,
 * beside its recipients' states), so the status API's one read answers both.
 *
 * Bounded: a message opened 10,000 times must not grow its item. Opens are counters (`ADD`),
 * `firstOpenedAt` one time, and `clicks` a list that stops at the first 100 (the write's
 * condition refuses the 101st), each URL cut at 2,000 characters. The item stays a few hundred
 * kilobytes at worst (100 × 2 KB) and a few hundred bytes usually.
 *
 * Per recipient: SES does not say who opened, so an event is attributed to a recipient only when
 * the message had exactly one (`soleRecipient`). Then that recipient's opens and clicks are the
 * message's, and are not stored twice.
 *
 * Exactly once per SES event (SES publishes some twice, SQS delivers again after a failure):
 * before counting, the event's id is claimed in an item of its own under the message's partition
 * (`MSG#<id>` / `E#<event id>`, expiring with the message), written only if absent. As for the
 * reputation counters, a crash between claim and count loses that one count rather than risk
 * counting it twice. The claims live in items of their own, not in a set on the message item,
 * which 10,000 opens would grow.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { EngagementEvent } from '../delivery/ses-event';
import { unlessConditionFails } from './conditions';
import { itemKey } from './table';

/** The status answer lists the first 100 clicks; no more are kept. */
export const MAX_CLICKS = 100;
/** Longer links are kept cut to this (browsers and SES's own redirect limit them to a few thousand). */
const MAX_URL_LENGTH = 2_000;

export interface Click {
  readonly url: string;
  readonly at: string;
}

/** What is recorded of a message's opens and clicks. */
export interface Engagement {
  /** Opens by people (machine opens are not counted here). */
  readonly opens: number;
  readonly machineOpens: number;
  /** The earliest open by a person, if any. */
  readonly firstOpenedAt: string | undefined;
  /** The first 100 clicks recorded, in time order. */
  readonly clicks: readonly Click[];
  /** The recipient these are attributed to, when the message had exactly one. */
  readonly recipient: string | undefined;
}

type Item = Record<string, unknown>;

const ATTRIBUTES = { opens: 'opens', machineOpens: 'machineOpens', firstOpenedAt: 'firstOpenedAt', clicks: 'clicks', recipient: 'soleRecipient' } as const;

const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/** The engagement recorded on a message's status item. */
export function readEngagement(item: Item): Engagement {
  const clicks = (Array.isArray(item[ATTRIBUTES.clicks]) ? (item[ATTRIBUTES.clicks] as Item[]) : [])
    .flatMap((click) => (typeof click?.u === 'string' && typeof click.at === 'string' ? [{ url: click.u, at: click.at }] : []))
    .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  const first = item[ATTRIBUTES.firstOpenedAt];
  const recipient = item[ATTRIBUTES.recipient];
  return {
    opens: count(item[ATTRIBUTES.opens]),
    machineOpens: count(item[ATTRIBUTES.machineOpens]),
    firstOpenedAt: typeof first === 'string' ? first : undefined,
    clicks,
    recipient: typeof recipient === 'string' ? recipient : undefined,
  };
}

export class DynamoDbEngagementStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /** Claims the event: true the first time, false for any repeat of it. */
  claim(event: EngagementEvent, expiresAt: number): Promise<boolean> {
    return unlessConditionFails(() =>
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: itemKey.message(event.messageId).pk, sk: `E#${event.id}` },
          UpdateExpression: 'SET expiresAt = :expires',
          ConditionExpression: 'attribute_not_exists(pk)',
          ExpressionAttributeValues: { ':expires': expiresAt },
        }),
      ),
    );
  }

  /** Records a claimed event: a person's open, a machine's open, or a click (the first 100). */
  async record(event: EngagementEvent, machine: boolean, expiresAt: number): Promise<void> {
    const names: Record<string, string> = {};
    const values: Item = { ':org': event.organizationId, ':expires': expiresAt };
    const sets = ['organizationId = if_not_exists(organizationId, :org)', 'expiresAt = :expires'];
    // An item of another Organization is never touched (it cannot happen: the tag is the service's own).
    const conditions = ['(attribute_not_exists(organizationId) OR organizationId = :org)'];
    let add: string | undefined;
    if (event.recipient) {
      names['#sole'] = ATTRIBUTES.recipient;
      values[':sole'] = event.recipient;
      sets.push('#sole = if_not_exists(#sole, :sole)');
    }
    if (event.type === 'Click') {
      names['#clicks'] = ATTRIBUTES.clicks;
      Object.assign(values, { ':click': [{ u: (event.url ?? '').slice(0, MAX_URL_LENGTH), at: event.at }], ':none': [], ':max': MAX_CLICKS });
      sets.push('#clicks = list_append(if_not_exists(#clicks, :none), :click)');
      conditions.push('(attribute_not_exists(#clicks) OR size(#clicks) < :max)');
    } else {
      names['#count'] = machine ? ATTRIBUTES.machineOpens : ATTRIBUTES.opens;
      values[':one'] = 1;
      add = '#count :one';
      if (!machine) {
        names['#first'] = ATTRIBUTES.firstOpenedAt;
        values[':at'] = event.at;
        sets.push('#first = if_not_exists(#first, :at)');
      }
    }
    let first: unknown;
    await unlessConditionFails(async () => {
      const { Attributes } = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: itemKey.message(event.messageId),
          UpdateExpression: `SET ${sets.join(', ')}${add ? ` ADD ${add}` : ''}`,
          ConditionExpression: conditions.join(' AND '),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      first = Attributes?.[ATTRIBUTES.firstOpenedAt];
    });
    // SES's events arrive in any order: an earlier open that comes late moves the first open back.
    if (event.type === 'Open' && !machine && typeof first === 'string' && first > event.at) await this.moveFirstOpen(event);
  }

  private moveFirstOpen(event: EngagementEvent): Promise<boolean> {
    return unlessConditionFails(() =>
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: itemKey.message(event.messageId),
          UpdateExpression: 'SET #first = :at',
          ConditionExpression: '#first > :at AND organizationId = :org',
          ExpressionAttributeNames: { '#first': ATTRIBUTES.firstOpenedAt },
          ExpressionAttributeValues: { ':at': event.at, ':org': event.organizationId },
        }),
      ),
    );
  }
}
