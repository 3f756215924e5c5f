/**
 * Child process of `npm run bench`: the stand-ins for AWS, away from the measuring process.
 * dynalite behind a proxy that counts DynamoDB operations as they cross the wire, and the SES v2
 * emulator behind a proxy that adds the configured latency to every call.
 */
import { startDynamoDb, startSesEmulator } from '../infra/local/emulators';
import { serveParent } from './child';
import type { ItemWrites } from './item-writes';
import { ItemWriteCounter } from './item-writes';
import { startProxy } from './proxy';

export interface EmulatorsInfo {
  /** dynalite itself: for the benchmark's own set-up writes, which are not counted. */
  readonly dynamodbDirect: string;
  /** The counting proxy: what the service under test is given. */
  readonly dynamodbCounted: string;
  /** The emulator itself: for its store (clear, count), never for sends. */
  readonly sesDirect: string;
  /** The latency proxy: what both the service and the baseline send through. */
  readonly sesDelayed: string;
  readonly latencyMs: number;
}

export type OperationCounts = Record<string, number>;

const latencyMs = Number(process.env.BENCH_CHILD_LATENCY_MS ?? '50');
const counts = new Map<string, number>();
const itemWrites = new ItemWriteCounter();
const operationOf = (target: string | string[] | undefined) => {
  // DynamoDB's JSON protocol names the operation in this header, e.g. DynamoDB_20120810.BatchGetItem.
  const name = String(target ?? 'unknown');
  return name.slice(name.indexOf('.') + 1);
};

const dynamodb = await startDynamoDb();
const ses = await startSesEmulator();
const counted = await startProxy({
  upstream: dynamodb.endpoint,
  onRequest: (req) => {
    const operation = operationOf(req.headers['x-amz-target']);
    counts.set(operation, (counts.get(operation) ?? 0) + 1);
  },
  onBody: (req, body) => itemWrites.record(operationOf(req.headers['x-amz-target']), body),
  onAnswer: (req, body, status, _answer, ms) => itemWrites.answered(operationOf(req.headers['x-amz-target']), body, status, ms),
});
const delayed = await startProxy({ upstream: ses.endpoint, delayMs: latencyMs });

const info: EmulatorsInfo = {
  dynamodbDirect: dynamodb.endpoint,
  dynamodbCounted: counted.endpoint,
  sesDirect: ses.endpoint,
  sesDelayed: delayed.endpoint,
  latencyMs,
};

serveParent(
  info,
  {
    async counts(): Promise<OperationCounts> {
      return Object.fromEntries(counts);
    },
    async resetCounts(): Promise<void> {
      counts.clear();
      itemWrites.reset();
    },
    /** Writes per item (pk, sk) since the last reset, and the largest item put whole. */
    async itemWrites(): Promise<ItemWrites> {
      return itemWrites.snapshot();
    },
    async clearMail(): Promise<void> {
      await fetch(`${ses.endpoint}/clear-store`, { method: 'POST' });
    },
    async mailCount(): Promise<number> {
      const response = await fetch(`${ses.endpoint}/store`);
      return ((await response.json()) as { emails: unknown[] }).emails.length;
    },
  },
  async () => {
    await Promise.all([counted.close(), delayed.close()]);
    await Promise.all([dynamodb.close(), ses.close()]);
  },
);
