/**
 * Closing the embedded DynamoDB (infra/local/emulators.ts) while it is still serving requests
 * whose clients have given up: dynalite closes its database once its server has closed, and
 * throws from its own callbacks (ending the whole test process) if a request is still being
 * served then. An SDK call that times out on a busy machine leaves exactly such a request behind.
 */
import { describe, expect, it } from '@jest/globals';
import { request } from 'node:http';
import { startDynamoDb } from '../../infra/local/emulators';

const TABLE = 'close-test';

function call(endpoint: string, target: string, body: unknown, abandon = false): Promise<number | undefined> {
  const url = new URL(endpoint);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method: 'POST',
        headers: {
          'content-type': 'application/x-amz-json-1.0',
          'x-amz-target': `DynamoDB_20120810.${target}`,
          authorization: 'AWS4-HMAC-SHA256 Credential=local/20261125/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
          'x-amz-date': '20261125T000000Z',
        },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode));
      },
    );
    req.on('error', (error) => (abandon ? resolve(undefined) : reject(error)));
    // The client gives up as soon as its request is on the wire, as a timed-out SDK call does.
    if (abandon) req.on('finish', () => setImmediate(() => req.destroy()));
    req.end(payload);
  });
}

describe('startDynamoDb', () => {
  it('closes only after the requests it is serving are done, even when their clients have gone', async () => {
    const dynamo = await startDynamoDb();
    expect(
      await call(dynamo.endpoint, 'CreateTable', {
        TableName: TABLE,
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    ).toBe(200);
    const big = 'x'.repeat(300_000);
    const abandoned = Array.from({ length: 40 }, (_, i) =>
      call(dynamo.endpoint, 'UpdateItem', { TableName: TABLE, Key: { pk: { S: `k${i % 4}` } }, UpdateExpression: 'SET v = :v', ExpressionAttributeValues: { ':v': { S: big } } }, true),
    );
    await Promise.all(abandoned);
    // Closed while dynalite is still working through the abandoned updates: with the database
    // closed under them, the process would end here.
    await dynamo.close();
    const reopened = await startDynamoDb();
    await reopened.close();
  });
});
