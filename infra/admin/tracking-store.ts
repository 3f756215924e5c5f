/**
 * The operator's side of an Organization's default open and click tracking (CONTRACT section 17
 * item 1): the `tracking` map on the Organization item, which the send path reads with the rest
 * of the item (functions/shared/store/dynamodb-access-store.ts), so a default costs no read.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Tracking, TrackingChoice } from '../../functions/shared/mail/tracking';
import { readTracking, resolveTracking } from '../../functions/shared/mail/tracking';
import { unlessConditionFails } from '../../functions/shared/store/conditions';
import { RecordNotFoundError } from '../../functions/shared/store/records';
import { TRACKING_ATTRIBUTE, itemKey } from '../../functions/shared/store/table';

export class OrganizationTrackingStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /** The Organization's default: off unless set. `organizationId` is already canonical. */
  async get(organizationId: string): Promise<Tracking> {
    return readTracking(await this.stored(organizationId));
  }

  /**
   * Sets one or both switches, the other kept. Written only if the stored default is still the
   * one read, else read again: two operators setting opens and clicks at the same moment both
   * count. The send path reads the default with the Organization item, so it applies within the
   * auth cache's lifetime (AUTH_CACHE_SECONDS), to messages accepted from then on: a scheduled
   * message keeps the tracking it was accepted with.
   */
  async set(organizationId: string, change: TrackingChoice): Promise<Tracking> {
    for (let attempt = 1; ; attempt++) {
      const stored = await this.stored(organizationId);
      const next = resolveTracking(change, readTracking(stored));
      const written = await unlessConditionFails(() =>
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: itemKey.organization(organizationId),
            UpdateExpression: 'SET #t = :tracking',
            ...unchangedSince(stored, { opens: next.opens, clicks: next.clicks }),
          }),
        ),
      );
      if (written) return next;
      // Changed meanwhile, or the Organization was deleted (the next read says so).
      if (attempt === MAX_ATTEMPTS) throw new Error(`the tracking default of ${organizationId} kept changing while it was being set; try again`);
    }
  }

  /** The item's tracking attribute as stored (undefined when never set); throws when there is no such Organization. */
  private async stored(organizationId: string): Promise<unknown> {
    const { Item } = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: itemKey.organization(organizationId), ProjectionExpression: 'pk, #t', ExpressionAttributeNames: { '#t': TRACKING_ATTRIBUTE }, ConsistentRead: true }),
    );
    if (!Item) throw new RecordNotFoundError(`no Organization with id ${organizationId}`);
    return Item[TRACKING_ATTRIBUTE];
  }
}

const MAX_ATTEMPTS = 5;

/**
 * The condition (with its names and values) that the Organization still exists and each switch
 * is still as read: the same value, or still absent; and `tracking`, the value to write.
 */
function unchangedSince(stored: unknown, tracking: Tracking) {
  const fields = stored && typeof stored === 'object' ? (stored as Record<string, unknown>) : undefined;
  const conditions = ['attribute_exists(pk)'];
  const values: Record<string, unknown> = { ':tracking': tracking };
  if (fields === undefined) conditions.push('attribute_not_exists(#t)');
  else {
    for (const [name, placeholder] of [['opens', 'o'], ['clicks', 'c']] as const) {
      if (fields[name] === undefined) conditions.push(`attribute_not_exists(#t.#${placeholder})`);
      else {
        conditions.push(`#t.#${placeholder} = :${placeholder}`);
        values[`:${placeholder}`] = fields[name];
      }
    }
  }
  return {
    ConditionExpression: conditions.join(' AND '),
    ExpressionAttributeNames: { '#t': TRACKING_ATTRIBUTE, ...(fields && { '#o': 'opens', '#c': 'clicks' }) },
    ExpressionAttributeValues: values,
  };
}
