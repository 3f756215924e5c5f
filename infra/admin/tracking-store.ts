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
import { TRACKING_ATTRIBUTE, TRACKING_VERSION_ATTRIBUTE, itemKey } from '../../functions/shared/store/table';

export class OrganizationTrackingStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /** The Organization's default: off unless set. `organizationId` is already canonical. */
  async get(organizationId: string): Promise<Tracking> {
    return (await this.stored(organizationId)).tracking;
  }

  /**
   * Sets one or both switches, the other kept. Written only if the stored default is still the
   * one read (its version has not moved), else read again: two operators setting opens and clicks
   * at the same moment both count. The send path reads the default with the Organization item, so it applies within the
   * auth cache's lifetime (AUTH_CACHE_SECONDS), to messages accepted from then on: a scheduled
   * message keeps the tracking it was accepted with.
   */
  async set(organizationId: string, change: TrackingChoice): Promise<Tracking> {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const { tracking, version } = await this.stored(organizationId);
      const next = resolveTracking(change, tracking);
      // Written only at the version read (absent before the first change through this store);
      // each change counts it up. A version, not the map itself: dynalite cannot compare maps.
      const written = await unlessConditionFails(() =>
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: itemKey.organization(organizationId),
            UpdateExpression: 'SET #t = :tracking ADD #v :one',
            ConditionExpression: `attribute_exists(pk) AND ${version === undefined ? 'attribute_not_exists(#v)' : '#v = :read'}`,
            ExpressionAttributeNames: { '#t': TRACKING_ATTRIBUTE, '#v': TRACKING_VERSION_ATTRIBUTE },
            ExpressionAttributeValues: { ':tracking': { opens: next.opens, clicks: next.clicks }, ':one': 1, ...(version !== undefined && { ':read': version }) },
          }),
        ),
      );
      if (written) return next;
    }
    // Changed at every attempt, or deleted since the last read (which this read then reports).
    await this.stored(organizationId);
    throw new Error(`the tracking default of ${organizationId} kept changing while it was being set; try again`);
  }

  /** The default as stored (a corrupt one reads as off) and its version; throws when there is no such Organization. */
  private async stored(organizationId: string): Promise<{ tracking: Tracking; version: unknown }> {
    const { Item } = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: itemKey.organization(organizationId),
        ProjectionExpression: 'pk, #t, #v',
        ExpressionAttributeNames: { '#t': TRACKING_ATTRIBUTE, '#v': TRACKING_VERSION_ATTRIBUTE },
        ConsistentRead: true,
      }),
    );
    if (!Item) throw new RecordNotFoundError(`no Organization with id ${organizationId}`);
    return { tracking: readTracking(Item[TRACKING_ATTRIBUTE]), version: Item[TRACKING_VERSION_ATTRIBUTE] };
  }
}

const MAX_ATTEMPTS = 5;
