/**
 * The local stack against a DynamoDB of the user's own (`DYNAMODB_ENDPOINT`, README "Configuration"),
 * one that, like `npx dynalite` or DynamoDB Local, takes a while to create a table: the embedded
 * emulator creates tables at once, which hid that the stack wrote its demo to a table still
 * CREATING (ResourceNotFoundException, and no stack).
 */
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { closeServer, ensureTable, listening } from '../../infra/local/emulators';
import { LOOPBACK } from '../../infra/local/settings';
import { messageBody, send, sentEmails, startTestStack } from './helpers';

/** dynalite's own default, as `npx dynalite` runs it. */
const CREATE_TABLE_MS = 500;

let server: Server;
let endpoint: string;
let client: DynamoDBClient;

beforeAll(async () => {
  server = dynalite({ createTableMs: CREATE_TABLE_MS });
  endpoint = `http://${LOOPBACK}:${await listening(server, 0)}`;
  client = new DynamoDBClient({ region: 'us-east-1', endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
});

afterAll(async () => {
  client.destroy();
  await closeServer(server);
});

const status = async (tableName: string) => (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table?.TableStatus;

describe('ensureTable against a DynamoDB that takes time to create tables', () => {
  it('returns once the table is ACTIVE, so the first write lands', async () => {
    expect(await ensureTable(client, 'slow-create')).toBe('created');
    expect(await status('slow-create')).toBe('ACTIVE');
    await client.send(new PutItemCommand({ TableName: 'slow-create', Item: { pk: { S: 'a' }, sk: { S: 'b' } } }));
  });

  it('two at once (two stacks starting together): one creates, the other waits for that table', async () => {
    const outcomes = await Promise.all([ensureTable(client, 'raced'), ensureTable(client, 'raced')]);
    expect([...outcomes].sort()).toEqual(['created', 'existed']);
    expect(await status('raced')).toBe('ACTIVE');
  });

  it('waits for a table another process has just created and that is still CREATING', async () => {
    await client.send(
      new CreateTableCommand({
        TableName: 'creating',
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      }),
    );
    expect(await status('creating')).toBe('CREATING');
    expect(await ensureTable(client, 'creating')).toBe('existed');
    expect(await status('creating')).toBe('ACTIVE');
  });

  it('names the table and the wait when it does not become ACTIVE in time', async () => {
    await expect(ensureTable(client, 'never-ready', { maxWaitTime: 0.3, minDelay: 0.05, maxDelay: 0.05 })).rejects.toThrow(
      'The table never-ready did not become ACTIVE within 0.3 s; the DynamoDB endpoint last answered: the table, not yet ACTIVE',
    );
  });
});

describe('the local stack with DYNAMODB_ENDPOINT set to such a DynamoDB', () => {
  it('starts, seeds its demo there and sends the demo message', async () => {
    const stack = await startTestStack({ dynamodbEndpoint: endpoint, tableName: 'external-local' });
    try {
      expect(stack.logs).toContain('Table     external-local (created)');
      const demo = stack.demo!;
      const response = await send(stack, demo.apiKey, messageBody(demo.organizationId, { To: ['external-dynamodb@example.org'] }));
      expect(response.status).toBe(200);
      expect((await sentEmails(stack.sesUrl)).some((email) => email.destination.to.includes('external-dynamodb@example.org'))).toBe(true);
    } finally {
      await stack.stop();
    }
  });
});
