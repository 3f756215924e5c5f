/**
 * One client per AWS service, built once per function instance from the configuration, with
 * keep-alive connections and tight timeouts: a slow dependency must fail fast enough for the
 * request to answer 503 or report the message, within the API Gateway limit.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { Config } from './config';

/**
 * How long a kept-alive connection may sit idle before this side closes it. A server that closes
 * it first can do so just as a request goes out on it: the request then fails with ECONNRESET,
 * which for SendEmail means OutcomeUnknown (never retried, as SES may have the message). Node
 * also closes an idle connection 1 s before the server's `Keep-Alive: timeout=N` hint, but only
 * when the agent has a timeout of its own. 15 s is below the shortest idle timeout known for an
 * AWS endpoint (S3's 20 s). The agent's timeout never ends a request in flight: those have the
 * SDK's own timeouts.
 */
const IDLE_SOCKET_MS = 15_000;

export function httpHandler(connectionTimeout: number, requestTimeout: number): NodeHttpHandler {
  const agentOptions = { keepAlive: true, maxSockets: 64, timeout: IDLE_SOCKET_MS };
  return new NodeHttpHandler({
    connectionTimeout,
    requestTimeout,
    // Without this the SDK only logs a warning when requestTimeout passes, and a hung endpoint
    // holds the request until Lambda's own timeout.
    throwOnRequestTimeout: true,
    // Options, not agents: the handler makes each agent itself, the plain-HTTP one (only local
    // endpoints use it) on its first request. Importing `node:http` here would cost every cold
    // start on Node 22 and later about 20 ms: as an ES module it loads undici, Node's fetch, for
    // its WebSocket export (docs/performance.md, "Cold start").
    httpAgent: agentOptions,
    httpsAgent: agentOptions,
  });
}

/** Wraps a client for tracing (X-Ray) when tracing is on. */
export type Instrument = <T>(client: T) => T;
export const asIs: Instrument = (client) => client;

/** Static credentials; without them the SDK's default chain decides (in Lambda, the role). */
export interface Credentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

export interface ClientOptions {
  readonly instrument?: Instrument;
  readonly credentials?: Credentials | undefined;
}

export function createDynamoDbClient(config: Pick<Config, 'region' | 'dynamodbEndpoint'>, options: ClientOptions = {}): DynamoDBDocumentClient {
  const { instrument = asIs, credentials } = options;
  const client = instrument(new DynamoDBClient({
    region: config.region,
    ...(config.dynamodbEndpoint && { endpoint: config.dynamodbEndpoint }),
    ...(credentials && { credentials }),
    // DynamoDB answers in milliseconds; two tries of 2 s each turn a hung endpoint into a 503
    // within about 4 s.
    maxAttempts: 2,
    requestHandler: httpHandler(1_000, 2_000),
  }));
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}

export function createSesClient(config: Pick<Config, 'region' | 'sesEndpoint'>, options: ClientOptions = {}): SESv2Client {
  const { instrument = asIs, credentials } = options;
  return instrument(new SESv2Client({
    region: config.region,
    ...(config.sesEndpoint && { endpoint: config.sesEndpoint }),
    ...(credentials && { credentials }),
    // Retries are the send logic's, which knows the deadline and which faults are safe to retry.
    maxAttempts: 1,
    requestHandler: httpHandler(2_000, 10_000),
  }));
}

