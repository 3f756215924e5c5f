/**
 * Idempotency records and per-message checkpoints in the service's table.
 *
 * | item       | pk                              | sk                          |
 * |------------|---------------------------------|-----------------------------|
 * | request    | IDEM#<userId>#<sha256 of key>   | REQUEST                     |
 * | checkpoint | IDEM#<userId>#<sha256 of key>   | MSG#<claimId>#<index 0000>  |
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Checkpoint, IdempotencyRecord, IdempotencyStore, StoredResponse } from './ports';
import { unlessConditionFails } from './conditions';
import { queryAll } from './query-all';
import { withStorageFaults } from './storage-errors';

const REQUEST = 'REQUEST';
const checkpointKey = (claimId: string, index: number) => `MSG#${claimId}#${String(index).padStart(4, '0')}`;

export class DynamoDbIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  create(record: IdempotencyRecord, nowSeconds: number): Promise<boolean> {
    return withStorageFaults(() =>
      unlessConditionFails(() =>
        this.client.send(
          new PutCommand({
            TableName: this.tableName,
            Item: { pk: record.scope, sk: REQUEST, ...record, scope: undefined },
            // TTL deletion lags by up to days, so an expired record counts as absent here too.
            ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :now',
            ExpressionAttributeValues: { ':now': nowSeconds },
          }),
        ),
      ),
    );
  }

  async get(scope: string): Promise<IdempotencyRecord | undefined> {
    const { Item } = await withStorageFaults(() =>
      this.client.send(new GetCommand({ TableName: this.tableName, Key: { pk: scope, sk: REQUEST }, ConsistentRead: true })),
    );
    if (!Item) return undefined;
    return {
      scope,
      claimId: String(Item.claimId),
      fingerprint: String(Item.fingerprint),
      status: Item.status === 'COMPLETE' ? 'COMPLETE' : 'IN_PROGRESS',
      lockUntil: Number(Item.lockUntil),
      expiresAt: Number(Item.expiresAt),
      ...(Item.response && { response: Item.response as StoredResponse }),
    };
  }

  takeOver(scope: string, expectedLockUntil: number, lockUntil: number): Promise<boolean> {
    return withStorageFaults(() =>
      unlessConditionFails(() =>
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { pk: scope, sk: REQUEST },
            UpdateExpression: 'SET lockUntil = :lockUntil',
            ConditionExpression: '#status = :inProgress AND lockUntil = :expected',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: { ':lockUntil': lockUntil, ':expected': expectedLockUntil, ':inProgress': 'IN_PROGRESS' },
          }),
        ),
      ),
    );
  }

  async checkpoints(scope: string, claimId: string): Promise<Checkpoint[]> {
    const items = await withStorageFaults(() =>
      queryAll(this.client, {
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': scope, ':prefix': `MSG#${claimId}#` },
        ConsistentRead: true,
      }),
    );
    return items.map((item) => ({
      index: Number(item.index),
      state: item.state === 'DONE' ? 'DONE' : 'IN_FLIGHT',
      ...(typeof item.result === 'string' && { result: JSON.parse(item.result) as unknown }),
    }));
  }

  async checkpoint(scope: string, claimId: string, checkpoint: Checkpoint, expiresAt: number): Promise<void> {
    await withStorageFaults(() =>
      this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            pk: scope,
            sk: checkpointKey(claimId, checkpoint.index),
            index: checkpoint.index,
            state: checkpoint.state,
            ...(checkpoint.result !== undefined && { result: JSON.stringify(checkpoint.result) }),
            expiresAt,
          },
        }),
      ),
    );
  }

  async complete(scope: string, claimId: string, response: StoredResponse): Promise<void> {
    await withStorageFaults(() =>
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: scope, sk: REQUEST },
          UpdateExpression: 'SET #status = :complete, #response = :response',
          ConditionExpression: 'claimId = :claimId',
          ExpressionAttributeNames: { '#status': 'status', '#response': 'response' },
          ExpressionAttributeValues: { ':complete': 'COMPLETE', ':response': response, ':claimId': claimId },
        }),
      ),
    );
  }
}
