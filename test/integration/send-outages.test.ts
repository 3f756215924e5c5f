/**
 * Real outages, no mocks: the endpoints point at a closed port, as when DynamoDB or SES is down.
 */
import { expect, it } from '@jest/globals';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import { createDynamoDbClient } from '../../functions/shared/runtime/clients';
import { SesMailer } from '../../functions/shared/mail/ses-mailer';
import { DynamoDbAccessStore } from '../../functions/shared/store/dynamodb-access-store';
import type { Harness, Tenant } from '../support/harness';
import { authorised, sendBody, startHarness, useHarness } from '../support/harness';

let h!: Harness;
let tenant!: Tenant;

useHarness((harness, first) => {
  h = harness;
  tenant = first;
});

  it('answers 502 with SesUnavailable when SES cannot be reached', async () => {
    const unreachable = { mailer: new SesMailer(new SESv2Client({ region: 'us-east-1', endpoint: 'http://127.0.0.1:9', maxAttempts: 1 })) };
    const result = await h.invoke({ headers: authorised(tenant), body: sendBody(tenant) }, unreachable);
    expect(result.statusCode).toBe(502);
    expect(result.body.Messages[0].Error).toMatchObject({ Code: 'SesUnavailable', Retryable: true });
  });

  it('answers 503 when the DynamoDB endpoint is down (real connection refused)', async () => {
    const access = new DynamoDbAccessStore(createDynamoDbClient({ region: 'us-east-1', dynamodbEndpoint: 'http://127.0.0.1:9' }), h.config.tableName);
    const result = await h.invoke({ headers: authorised(tenant), body: sendBody(tenant) }, { access });
    expect(result.statusCode).toBe(503);
    expect(result.body.requestId).toEqual(expect.any(String));
  });

it('answers 503 once the running DynamoDB stops, and sends nothing', async () => {
  const other = await startHarness();
  try {
    const victim = await other.tenant();
    await other.dynamoDb.close();
    await other.clearEmails();
    const result = await other.invoke({ headers: authorised(victim), body: sendBody(victim) });
    expect(result.statusCode).toBe(503);
    expect(await other.sentEmails()).toHaveLength(0);
  } finally {
    await other.stop();
  }
});

it('answers 503 within seconds when DynamoDB accepts connections but never answers', async () => {
  const silent = createServer(() => undefined); // holds every request open
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  try {
    const endpoint = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const access = new DynamoDbAccessStore(createDynamoDbClient({ region: 'us-east-1', dynamodbEndpoint: endpoint }), h.config.tableName);
    const started = Date.now();
    const result = await h.invoke({ headers: authorised(tenant), body: sendBody(tenant) }, { access });
    expect(result.statusCode).toBe(503);
    expect(Date.now() - started).toBeLessThan(10_000);
  } finally {
    silent.closeAllConnections();
    silent.close();
  }
}, 20_000);

it('answers 503 when DynamoDB answers with something that is not DynamoDB (a proxy page)', async () => {
  const proxy = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html' });
    response.end('<html>Gateway says hello</html>');
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  try {
    const endpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const access = new DynamoDbAccessStore(createDynamoDbClient({ region: 'us-east-1', dynamodbEndpoint: endpoint }), h.config.tableName);
    const result = await h.invoke({ headers: authorised(tenant), body: sendBody(tenant) }, { access });
    expect(result.statusCode).toBe(503);
  } finally {
    proxy.closeAllConnections();
    proxy.close();
  }
});
