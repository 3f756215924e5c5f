/**
 * The embedded stand-ins for AWS on a laptop: DynamoDB emulated by dynalite (in memory or
 * persisted in a folder) and Amazon SES v2 by aws-ses-v2-local, with its web viewer of sent mail;
 * each answers only to its own loopback Host (host-guard.ts).
 * Used by `npm start`, the tests and the benchmark, so they all run the same parts.
 */
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import { CreateTableCommand, DescribeTableCommand, ResourceInUseException, ResourceNotFoundException, UpdateTimeToLiveCommand, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import * as sesLocal from 'aws-ses-v2-local';
import { TABLE_SCHEMA } from '../../functions/shared/store/table';
import { guardHost } from './host-guard';
import { LOOPBACK } from './settings';

export interface RunningService {
  readonly endpoint: string;
  readonly port: number;
  close(): Promise<void>;
}


/** Closes a server and every connection it still holds. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.closeAllConnections?.();
    server.close((error) => (error ? reject(error) : resolve()));
  });
}

/** Listens on 127.0.0.1 (port 0: a free one) and resolves with the port. */
export function listening(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, LOOPBACK, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** How long closing dynalite waits for requests in flight before it closes anyway. */
const DRAIN_MS = 30_000;

/**
 * dynalite closes its database once its server has closed, and throws from its own callbacks
 * (ending the process) if it is still serving a request then. A connection closing says nothing
 * about that: the client of a request dynalite is still working on may have given up (an SDK
 * timeout on a busy machine). So requests are gated: each one handed to dynalite counts until
 * dynalite ends its response (or its body never arrived, so dynalite never starts it), and once
 * closing has begun new ones are refused with 503 instead of being handed over.
 */
function drainable(server: Server): () => Promise<void> {
  const handlers = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  server.removeAllListeners('request');
  let closing = false;
  let serving = 0;
  let drained: (() => void) | undefined;
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (closing) {
      res.writeHead(503, { connection: 'close' }).end();
      return;
    }
    serving++;
    let counted = true;
    const done = () => {
      if (!counted) return;
      counted = false;
      if (--serving === 0) drained?.();
    };
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
    res.end = ((...args: unknown[]) => {
      done();
      return end(...args);
    }) as ServerResponse['end'];
    req.on('close', () => {
      if (!req.complete) done();
    });
    for (const handler of handlers) handler.call(server, req, res);
  });
  return async () => {
    closing = true;
    if (serving > 0) {
      await new Promise<void>((resolve) => {
        const force = setTimeout(resolve, DRAIN_MS);
        drained = () => {
          clearTimeout(force);
          resolve();
        };
      });
    }
  };
}

/** Starts dynalite on 127.0.0.1; `path` persists data there, otherwise it lives in memory. */
export async function startDynamoDb(options: { port?: number; path?: string } = {}): Promise<RunningService> {
  const server: Server = guardHost(dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0, ...(options.path && { path: options.path }) }));
  const drain = drainable(server);
  const port = await listening(server, options.port ?? 0);
  const close = async () => {
    await drain();
    await new Promise<void>((resolve, reject) => {
      server.close((error) => (error ? reject(error) : resolve()));
      server.closeAllConnections?.();
    });
  };
  return { endpoint: `http://${LOOPBACK}:${port}`, port, close };
}

type SesServerFactory = (config?: { host?: string; port?: number }) => Promise<Server>;

// aws-ses-v2-local is CommonJS with an `exports.default`; depending on the loader it arrives
// wrapped once or twice.
function sesServerFactory(): SesServerFactory {
  const mod = sesLocal as unknown as { default: SesServerFactory | { default: SesServerFactory } };
  return typeof mod.default === 'function' ? mod.default : mod.default.default;
}

/**
 * The emulator resolves even when it could not listen (Express 5 hands the error to a callback
 * that ignores it), so the port is tried again here to recover the real error and its code.
 */
async function listenFailure(port: number): Promise<Error> {
  const probe = createServer();
  try {
    await listening(probe, port);
  } catch (error) {
    return error as Error;
  }
  await closeServer(probe);
  return new Error(`the SES emulator could not listen on ${LOOPBACK}:${port}`);
}

/** Starts the SES v2 emulator and its web viewer on 127.0.0.1. */
export async function startSesEmulator(options: { port?: number } = {}): Promise<RunningService> {
  const server = guardHost(await sesServerFactory()({ host: LOOPBACK, port: options.port ?? 0 }));
  const address = server.address();
  if (address === null || typeof address === 'string') throw await listenFailure(options.port ?? 0);
  const port = address.port;
  return { endpoint: `http://${LOOPBACK}:${port}`, port, close: () => closeServer(server) };
}

/**
 * How long `ensureTable` waits for a table to become ACTIVE. The embedded emulator creates tables
 * at once; another DynamoDB (dynalite by default, DynamoDB Local, LocalStack) may take a while, and
 * until then every item written to the table is refused with ResourceNotFoundException.
 */
export interface TableWait {
  /** Seconds, in all three: the SDK's waiter options. */
  readonly maxWaitTime: number;
  readonly minDelay: number;
  readonly maxDelay: number;
}
export const TABLE_ACTIVE_WAIT: TableWait = { maxWaitTime: 60, minDelay: 0.1, maxDelay: 2 };

/**
 * Creates the service's table if it is not there yet (same key schema and TTL as in AWS), and
 * returns once it is ACTIVE: also when another process created it a moment before (two local
 * stacks started at once against one DynamoDB), so that nothing is written to a table still
 * being created.
 */
/**
 * What the waiter saw last, from its timeout error (whose message is its state as JSON, with a
 * count per answer seen): a table still CREATING, or an error such as a refused connection.
 */
function lastObserved(error: Error): string {
  try {
    const { observedResponses } = JSON.parse(error.message) as { observedResponses?: Record<string, number> };
    const last = Object.keys(observedResponses ?? {}).at(-1);
    if (last !== undefined) return last.startsWith('200') ? 'the table, not yet ACTIVE' : last;
  } catch {
    // Not the JSON this SDK writes: say nothing more than the wait.
  }
  return 'nothing it could tell';
}

export async function ensureTable(client: DynamoDBClient, tableName: string, wait: Partial<TableWait> = {}): Promise<'created' | 'existed'> {
  const options = { ...TABLE_ACTIVE_WAIT, ...wait };
  const active = async () => {
    try {
      await waitUntilTableExists({ client, ...options }, { TableName: tableName });
    } catch (error) {
      if ((error as Error).name !== 'TimeoutError') throw error;
      throw new Error(`The table ${tableName} did not become ACTIVE within ${options.maxWaitTime} s; the DynamoDB endpoint last answered: ${lastObserved(error as Error)}`);
    }
  };
  try {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus !== 'ACTIVE') await active();
    return 'existed';
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: TABLE_SCHEMA.partitionKey, AttributeType: 'S' },
          { AttributeName: TABLE_SCHEMA.sortKey, AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: TABLE_SCHEMA.partitionKey, KeyType: 'HASH' },
          { AttributeName: TABLE_SCHEMA.sortKey, KeyType: 'RANGE' },
        ],
      }),
    );
  } catch (error) {
    // Created by another process between the describe and the create: theirs is the same table.
    if (!(error instanceof ResourceInUseException)) throw error;
    await active();
    return 'existed';
  }
  await active();
  await client
    .send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: TABLE_SCHEMA.ttlAttribute, Enabled: true },
      }),
    )
    .catch(() => undefined); // dynalite does not implement TTL; AWS does, through the CDK stack.
  return 'created';
}
