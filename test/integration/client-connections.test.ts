/**
 * The AWS clients' connections (functions/shared/runtime/clients.ts): kept alive, at most 64
 * sockets, closed after 15 s idle (docs/performance.md, "Connections"). The handler is given the
 * agents' options rather than agents, so that `node:http` is not loaded at start-up (on Node 22
 * and later it loads Node's fetch with it): these tests hold the options to reaching the agents
 * the handler makes, for plain HTTP (a local endpoint) and HTTPS alike.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import type { NodeHttpHandler } from '@smithy/node-http-handler';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { createDynamoDbClient } from '../../functions/shared/runtime/clients';
import type { RunningService } from '../../infra/local/emulators';
import { startDynamoDb } from '../../infra/local/emulators';

let dynamo: RunningService;
beforeAll(async () => {
  dynamo = await startDynamoDb();
});
afterAll(async () => dynamo.close());

describe('the AWS clients’ connections', () => {
  it('keep connections alive, at most 64 sockets, closed after 15 s idle, over HTTP and HTTPS', async () => {
    const client = createDynamoDbClient({ region: 'us-east-1', dynamodbEndpoint: dynamo.endpoint });
    try {
      await client.send(new ListTablesCommand({}));
      const handler = client.config.requestHandler as NodeHttpHandler;
      const { httpAgent, httpsAgent } = handler.httpHandlerConfigs() as { httpAgent?: HttpAgent; httpsAgent?: HttpsAgent };
      expect(httpAgent).toBeInstanceOf(HttpAgent);
      expect(httpsAgent).toBeInstanceOf(HttpsAgent);
      // `options` is what the agent was made with (Node keeps it; its types do not declare it).
      for (const agent of [httpAgent!, httpsAgent!] as (HttpAgent & { options: { keepAlive?: boolean; timeout?: number } })[]) {
        expect({ keepAlive: agent.options.keepAlive, maxSockets: agent.maxSockets, timeout: agent.options.timeout }).toEqual({ keepAlive: true, maxSockets: 64, timeout: 15_000 });
      }
    } finally {
      client.destroy();
    }
  });
});
