/**
 * One client per AWS service, built once per function instance from the configuration, with
 * keep-alive connections and tight timeouts: a slow dependency must fail fast enough for the
 * request to answer 503 or report the message, within the API Gateway limit.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { Agent } from 'node:https';
import { Agent as HttpAgent } from 'node:http';
import type { Config } from './config';

function handler(connectionTimeout: number, requestTimeout: number): NodeHttpHandler {
  return new NodeHttpHandler({
    connectionTimeout,
    requestTimeout,
    httpAgent: new HttpAgent({ keepAlive: true, maxSockets: 64 }),
    httpsAgent: new Agent({ keepAlive: true, maxSockets: 64 }),
  });
}

/** Wraps a client for tracing (X-Ray) when tracing is on. */
export type Instrument = <T>(client: T) => T;
const asIs: Instrument = (client) => client;

export function createDynamoDbClient(config: Pick<Config, 'region' | 'dynamodbEndpoint'>, instrument: Instrument = asIs): DynamoDBDocumentClient {
  const client = instrument(new DynamoDBClient({
    region: config.region,
    ...(config.dynamodbEndpoint && { endpoint: config.dynamodbEndpoint }),
    maxAttempts: 3,
    requestHandler: handler(1_000, 3_000),
  }));
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}

export function createSesClient(config: Pick<Config, 'region' | 'sesEndpoint'>, instrument: Instrument = asIs): SESv2Client {
  return instrument(new SESv2Client({
    region: config.region,
    ...(config.sesEndpoint && { endpoint: config.sesEndpoint }),
    // Retries are the send logic's, which knows the deadline and which faults are safe to retry.
    maxAttempts: 1,
    requestHandler: handler(2_000, 10_000),
  }));
}
