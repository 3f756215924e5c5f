/**
 * The operator's side of an Organization's default open and click tracking (CONTRACT section 17
 * item 1): the `tracking` map on the Organization item, which the send path reads with the rest
 * of the item (functions/shared/store/dynamodb-access-store.ts), so a default costs no read.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Tracking, TrackingChoice } from '../../functions/shared/mail/tracking';
import { readTracking, resolveTracking } from '../../functions/shared/mail/tracking';
import { conditionally } from '../../functions/shared/store/conditions';
import { RecordNotFoundError } from '../../functions/shared/store/records';
import { TRACKING_ATTRIBUTE, itemKey } from '../../functions/shared/store/table';

export class OrganizationTrackingStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /** The Organization's default: off unless set. `organizationId` is already canonical. */
  async get(organizationId: string): Promise<Tracking> {
    const { Item } = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: itemKey.organization(organizationId), ProjectionExpression: 'pk, #t', ExpressionAttributeNames: { '#t': TRACKING_ATTRIBUTE }, ConsistentRead: true }),
    );
    if (!Item) throw new RecordNotFoundError(`no Organization with id ${organizationId}`);
    return readTracking(Item[TRACKING_ATTRIBUTE]);
  }

  /**
   * Sets one or both switches, the other kept. The send path reads the default with the
   * Organization item, so it applies within the auth cache's lifetime (AUTH_CACHE_SECONDS), to
   * messages accepted from then on: a scheduled message keeps the tracking it was accepted with.
   */
  async set(organizationId: string, change: TrackingChoice): Promise<Tracking> {
    const next = resolveTracking(change, await this.get(organizationId));
    await conditionally(
      () =>
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: itemKey.organization(organizationId),
            UpdateExpression: 'SET #t = :tracking',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeNames: { '#t': TRACKING_ATTRIBUTE },
            ExpressionAttributeValues: { ':tracking': { opens: next.opens, clicks: next.clicks } },
          }),
        ),
      async (cause) => new RecordNotFoundError(`no Organization with id ${organizationId}`, { cause }),
    );
    return next;
  }
}
