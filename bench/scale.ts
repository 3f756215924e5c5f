/**
 * `npm run bench -- --scale` (docs/performance.md; issue 32): does the shared send budget hold up
 * under many Organizations? 50 Organizations on TWO local stacks (two function instances) sharing
 * one table through a proxy in front of dynalite that counts writes per item, one-message requests
 * at high concurrency, with the budget on (SES_MAX_SEND_RATE 1000) and with it off (no rate known:
 * SES's emulator answers GetAccount with an error), in alternating slices of one run. Reports the
 * hottest item's writes per second and per request, the largest item written, the DynamoDB calls
 * per request (and the races lost), and p50/p99 latency and requests/s of both; the target is p99
 * with the budget at most 1.20× p99 without it.
 */
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDynamoDbClient } from '../functions/shared/runtime/clients';
import { DynamoDbAdminStore } from '../infra/admin/admin-store';
import { seedDemo } from '../infra/local/seed';
import type { Child } from './child';
import { forkChild } from './child';
import type { EmulatorsInfo } from './emulators-child';
import type { CallTally, ItemWrites } from './item-writes';
import { itemSize } from './item-writes';
import { markdownTable } from './rate';
import type { StackInfo } from './stack-child';
import { percentile, round } from './stats';

export interface ScaleOptions {
  readonly organizations: number;
  readonly connections: number;
  readonly durationSeconds: number;
  readonly latencyMs: number;
  readonly logDir: string;
}

export interface ScaleMode {
  readonly name: 'budget on' | 'budget off';
  readonly requests: number;
  /** Answers other than 200, by status. */
  readonly refused: Record<string, number>;
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly hottest: { readonly key: string; readonly writes: number; readonly perSecond: number; readonly perRequest: number };
  readonly largest: { readonly key: string; readonly bytes: number };
  readonly itemsWritten: number;
  /** DynamoDB calls per request by operation and kind of item, the share that failed (lost races), and their mean time. */
  readonly calls: Record<string, { readonly perRequest: number; readonly failedPerRequest: number; readonly meanMs: number }>;
}

export interface ScaleResult {
  readonly organizations: number;
  readonly connections: number;
  readonly durationSeconds: number;
  readonly on: ScaleMode;
  readonly off: ScaleMode;
  readonly p99Ratio: number;
  readonly pass: boolean;
}

const REGION = 'us-east-1';
const RATE = '1000';
const TARGET = 1.2;
/** Items read back after the load to learn their size (those written most often). */
const READ_BACK = 100;
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

interface Tenant {
  readonly apiKey: string;
  readonly organizationId: string;
}

/** Organizations beyond the stacks' demo ones, seeded straight into dynalite (not counted). */
async function seedOrganizations(endpoint: string, tableName: string, count: number): Promise<Tenant[]> {
  const documents = createDynamoDbClient({ region: REGION, dynamodbEndpoint: endpoint });
  try {
    const admin = new DynamoDbAdminStore(documents, tableName);
    const tenants: Tenant[] = [];
    for (let i = 0; i < count; i++) tenants.push(await seedDemo(admin));
    return tenants;
  } finally {
    documents.destroy();
  }
}

/** `connections` loops of one-message requests over the tenants and stacks, for `durationSeconds`. */
async function load(stacks: readonly StackInfo[], tenants: readonly Tenant[], options: ScaleOptions): Promise<{ latencies: number[]; refused: Record<string, number>; elapsedMs: number }> {
  const latencies: number[] = [];
  const refused: Record<string, number> = {};
  let next = 0;
  const started = performance.now();
  const until = started + options.durationSeconds * 1_000;
  const loop = async () => {
    while (performance.now() < until) {
      const n = next++;
      const tenant = tenants[n % tenants.length]!;
      const stack = stacks[n % stacks.length]!;
      const body = JSON.stringify({
        OrganizationId: tenant.organizationId,
        Messages: [{ From: 'bench@example.com', To: [`r${n}@example.org`], Subject: `scale ${n}`, TextContent: 'scale bench' }],
      });
      const t0 = performance.now();
      const response = await fetch(stack.sendUrl, { method: 'POST', headers: { Authorization: `Bearer ${tenant.apiKey}`, 'Content-Type': 'application/json' }, body });
      await response.arrayBuffer();
      latencies.push(performance.now() - t0);
      if (response.status !== 200) refused[response.status] = (refused[response.status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: options.connections }, loop));
  return { latencies, refused, elapsedMs: performance.now() - started };
}

/** The largest of the items put whole and of the hottest items read back from dynalite. */
async function largestItem(endpoint: string, tableName: string, counted: ItemWrites): Promise<{ key: string; bytes: number }> {
  const client = new DynamoDBClient({ region: REGION, endpoint });
  try {
    let largest = counted.largestPut ?? { key: '-', bytes: 0 };
    const hottest = Object.entries(counted.writes).sort((a, b) => b[1] - a[1]).slice(0, READ_BACK);
    for (const [key] of hottest) {
      const space = key.indexOf(' ');
      const { Item } = await client.send(new GetItemCommand({ TableName: tableName, Key: { pk: { S: key.slice(0, space) }, sk: { S: key.slice(space + 1) } } }));
      const bytes = Item ? itemSize(Item as never) : 0;
      if (bytes > largest.bytes) largest = { key, bytes };
    }
    return largest;
  } finally {
    client.destroy();
  }
}

type Mode = ScaleMode['name'];
/** Slices per mode, run in the order off, on, on, off, off, on: a machine whose load drifts during the run weighs on both modes alike. */
const SLICES = 3;
const sliceOrder = (slices: number): Mode[] => Array.from({ length: 2 * slices }, (_, i) => (i % 4 === 0 || i % 4 === 3 ? 'budget off' : 'budget on'));

/** What one mode's slices add up to. */
interface Tally {
  latencies: number[];
  refused: Record<string, number>;
  elapsedMs: number;
  writes: Record<string, number>;
  calls: Record<string, CallTally>;
  largestPut: ItemWrites['largestPut'];
}

const emptyTally = (): Tally => ({ latencies: [], refused: {}, elapsedMs: 0, writes: {}, calls: {}, largestPut: undefined });

function add(tally: Tally, run: Awaited<ReturnType<typeof load>>, counted: ItemWrites): void {
  tally.latencies.push(...run.latencies);
  for (const [status, n] of Object.entries(run.refused)) tally.refused[status] = (tally.refused[status] ?? 0) + n;
  tally.elapsedMs += run.elapsedMs;
  for (const [key, n] of Object.entries(counted.writes)) tally.writes[key] = (tally.writes[key] ?? 0) + n;
  for (const [name, t] of Object.entries(counted.calls)) {
    const before = tally.calls[name] ?? { calls: 0, failed: 0, ms: 0 };
    tally.calls[name] = { calls: before.calls + t.calls, failed: before.failed + t.failed, ms: before.ms + t.ms };
  }
  if (counted.largestPut && counted.largestPut.bytes > (tally.largestPut?.bytes ?? 0)) tally.largestPut = counted.largestPut;
}

async function summarize(name: Mode, tally: Tally, endpoint: string, tableName: string): Promise<ScaleMode> {
  const [hotKey, hotWrites] = Object.entries(tally.writes).sort((a, b) => b[1] - a[1])[0] ?? ['-', 0];
  const seconds = tally.elapsedMs / 1_000;
  const requests = tally.latencies.length;
  const per = (n: number) => round(n / Math.max(1, requests), 3);
  return {
    name,
    requests,
    refused: tally.refused,
    requestsPerSecond: round(requests / seconds, 1),
    p50Ms: round(percentile(tally.latencies, 50), 1),
    p99Ms: round(percentile(tally.latencies, 99), 1),
    hottest: { key: hotKey, writes: hotWrites, perSecond: round(hotWrites / seconds, 1), perRequest: per(hotWrites) },
    largest: await largestItem(endpoint, tableName, { writes: tally.writes, largestPut: tally.largestPut, calls: tally.calls }),
    itemsWritten: Object.keys(tally.writes).length,
    calls: Object.fromEntries(Object.entries(tally.calls).map(([call, t]) => [call, { perRequest: per(t.calls), failedPerRequest: per(t.failed), meanMs: round(t.ms / Math.max(1, t.calls), 1) }])),
  };
}

/**
 * Both modes on the same two stack processes and the one table: each process serves a stack with
 * the budget off and one with it on (SES_MAX_SEND_RATE), and the load goes to one mode at a time,
 * in alternating slices, so that both see the same machine.
 */
export async function measureScale(options: ScaleOptions, progress: (line: string) => void): Promise<ScaleResult> {
  const children: Child<unknown>[] = [];
  try {
    const emulators = await forkChild<EmulatorsInfo>(here('./emulators-child.ts'), {
      env: { BENCH_CHILD_LATENCY_MS: String(options.latencyMs), AWS_SES_ACCOUNT: '' },
      logFile: join(options.logDir, 'scale-emulators.log'),
    });
    children.push(emulators);
    const baseEnv = { AUTH_CACHE_SECONDS: '30' };
    const stacks: Record<Mode, StackInfo[]> = { 'budget off': [], 'budget on': [] };
    for (const instance of [1, 2]) {
      const stack = await forkChild<StackInfo>(here('./stack-child.ts'), {
        env: {
          POWERTOOLS_LOG_LEVEL: 'ERROR',
          POWERTOOLS_METRICS_DISABLED: 'true',
          BENCH_CHILD_DYNAMODB_ENDPOINT: emulators.info.dynamodbCounted,
          BENCH_CHILD_SES_ENDPOINT: emulators.info.sesDelayed,
          BENCH_CHILD_SERVICE_ENV: JSON.stringify(baseEnv),
        },
        logFile: join(options.logDir, `scale-stack-${instance}.log`),
      });
      children.push(stack);
      stacks['budget off'].push(stack.info);
      stacks['budget on'].push(await stack.call<StackInfo>('startStack', { ...baseEnv, SES_MAX_SEND_RATE: RATE }));
    }
    const tableName = stacks['budget off'][0]!.tableName;
    if (Object.values(stacks).flat().some((info) => info.tableName !== tableName)) throw new Error('the stacks do not share one table');
    const seeded = await seedOrganizations(emulators.info.dynamodbDirect, tableName, Math.max(0, options.organizations - 2));
    const tenants: Tenant[] = [...stacks['budget off'], ...seeded];
    progress(`scale: ${tenants.length} Organizations, two instances, ${options.connections} connections, ${options.durationSeconds} s per mode in ${SLICES} slices, off and on alternating…`);
    // A short warm-up of each (caches, connections), then the counted slices.
    for (const mode of ['budget off', 'budget on'] as const) await load(stacks[mode], tenants, { ...options, durationSeconds: 1 });
    const tallies: Record<Mode, Tally> = { 'budget off': emptyTally(), 'budget on': emptyTally() };
    for (const mode of sliceOrder(SLICES)) {
      await emulators.call('resetCounts');
      const run = await load(stacks[mode], tenants, { ...options, durationSeconds: options.durationSeconds / SLICES });
      add(tallies[mode], run, await emulators.call<ItemWrites>('itemWrites'));
    }
    const off = await summarize('budget off', tallies['budget off'], emulators.info.dynamodbDirect, tableName);
    const on = await summarize('budget on', tallies['budget on'], emulators.info.dynamodbDirect, tableName);
    const p99Ratio = round(on.p99Ms / Math.max(0.001, off.p99Ms), 3);
    return { organizations: options.organizations, connections: options.connections, durationSeconds: options.durationSeconds, on, off, p99Ratio, pass: p99Ratio <= TARGET };
  } finally {
    for (const child of children.reverse()) await child.stop().catch(() => undefined);
  }
}

/** Item keys hold ids; only the item's kind (the key up to its first id) is printed. */
const kindOf = (key: string) => key.replace(/[0-9a-f-]{16,}|[0-9A-Z]{26}/g, '…');

export function renderScale(result: ScaleResult): string {
  const header = ['', 'req/s', 'p50 ms', 'p99 ms', 'not 200', 'hottest item', 'its writes/s', 'its writes/request', 'largest item (bytes)'];
  const lines = [result.off, result.on].map((m) => [
    m.name === 'budget on' ? `budget on (SES_MAX_SEND_RATE ${RATE})` : 'budget off',
    String(m.requestsPerSecond),
    String(m.p50Ms),
    String(m.p99Ms),
    Object.entries(m.refused).map(([status, n]) => `${n}× ${status}`).join(', ') || '0',
    kindOf(m.hottest.key),
    String(m.hottest.perSecond),
    String(m.hottest.perRequest),
    `${m.largest.bytes} (${kindOf(m.largest.key)})`,
  ]);
  const names = [...new Set([...Object.keys(result.off.calls), ...Object.keys(result.on.calls)])].sort();
  const cell = (m: ScaleMode, name: string) => {
    const c = m.calls[name];
    return c ? `${c.perRequest}${c.failedPerRequest > 0 ? ` (${c.failedPerRequest} failed)` : ''}, ${c.meanMs} ms` : '-';
  };
  const calls = markdownTable(['DynamoDB calls per request', 'budget off', 'budget on'], names.map((name) => [name, cell(result.off, name), cell(result.on, name)]));
  return [
    `${result.organizations} Organizations, two instances sharing one table, ${result.connections} connections × ${result.durationSeconds} s, one message per request:`,
    '',
    markdownTable(header, lines),
    '',
    calls,
    '',
    `${result.pass ? 'PASS' : 'MISS'}  scale: p99 with the budget on / off ≤ ${TARGET}×: ${result.p99Ratio}×`,
  ].join('\n');
}
