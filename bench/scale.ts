/**
 * `npm run bench -- --scale` (docs/performance.md; issue 32): does the shared send budget hold up
 * under many Organizations? 50 Organizations on TWO local stacks (two function instances) sharing
 * one table through a proxy in front of dynalite that counts writes per item, one-message requests
 * at high concurrency, once with the budget on (SES_MAX_SEND_RATE 1000) and once with it off (no
 * rate known: SES's emulator answers GetAccount with an error). Reports the hottest item's writes
 * per second and per request, the largest item written, and p50/p99 latency and requests/s of
 * both; the target is p99 with the budget at most 1.20× p99 without it.
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
import type { ItemWrites } from './item-writes';
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

async function measureMode(name: ScaleMode['name'], options: ScaleOptions, progress: (line: string) => void): Promise<ScaleMode> {
  const children: Child<unknown>[] = [];
  try {
    const tag = name.replace(' ', '-');
    const emulators = await forkChild<EmulatorsInfo>(here('./emulators-child.ts'), {
      env: { BENCH_CHILD_LATENCY_MS: String(options.latencyMs), AWS_SES_ACCOUNT: '' },
      logFile: join(options.logDir, `scale-${tag}-emulators.log`),
    });
    children.push(emulators);
    const serviceEnv = { AUTH_CACHE_SECONDS: '30', ...(name === 'budget on' && { SES_MAX_SEND_RATE: RATE }) };
    const stacks: Child<StackInfo>[] = [];
    for (const instance of [1, 2]) {
      const stack = await forkChild<StackInfo>(here('./stack-child.ts'), {
        env: {
          POWERTOOLS_LOG_LEVEL: 'ERROR',
          POWERTOOLS_METRICS_DISABLED: 'true',
          BENCH_CHILD_DYNAMODB_ENDPOINT: emulators.info.dynamodbCounted,
          BENCH_CHILD_SES_ENDPOINT: emulators.info.sesDelayed,
          BENCH_CHILD_SERVICE_ENV: JSON.stringify(serviceEnv),
        },
        logFile: join(options.logDir, `scale-${tag}-stack-${instance}.log`),
      });
      children.push(stack);
      stacks.push(stack);
    }
    const infos = stacks.map((s) => s.info);
    if (infos[0]!.tableName !== infos[1]!.tableName) throw new Error('the two stacks do not share one table');
    const tableName = infos[0]!.tableName;
    const seeded = await seedOrganizations(emulators.info.dynamodbDirect, tableName, Math.max(0, options.organizations - infos.length));
    const tenants: Tenant[] = [...infos, ...seeded];
    progress(`scale, ${name}: ${tenants.length} Organizations, two instances, ${options.connections} connections × ${options.durationSeconds} s…`);
    // A short warm-up (caches, connections), then the counted run.
    await load(infos, tenants, { ...options, durationSeconds: 1 });
    await emulators.call('resetCounts');
    const run = await load(infos, tenants, options);
    const counted = await emulators.call<ItemWrites>('itemWrites');
    const [hotKey, hotWrites] = Object.entries(counted.writes).sort((a, b) => b[1] - a[1])[0] ?? ['-', 0];
    const seconds = run.elapsedMs / 1_000;
    return {
      name,
      requests: run.latencies.length,
      refused: run.refused,
      requestsPerSecond: round(run.latencies.length / seconds, 1),
      p50Ms: round(percentile(run.latencies, 50), 1),
      p99Ms: round(percentile(run.latencies, 99), 1),
      hottest: { key: hotKey, writes: hotWrites, perSecond: round(hotWrites / seconds, 1), perRequest: round(hotWrites / Math.max(1, run.latencies.length), 3) },
      largest: await largestItem(emulators.info.dynamodbDirect, tableName, counted),
      itemsWritten: Object.keys(counted.writes).length,
      calls: Object.fromEntries(
        Object.entries(counted.calls).map(([name, t]) => {
          const per = (n: number) => round(n / Math.max(1, run.latencies.length), 3);
          return [name, { perRequest: per(t.calls), failedPerRequest: per(t.failed), meanMs: round(t.ms / Math.max(1, t.calls), 1) }];
        }),
      ),
    };
  } finally {
    for (const child of children.reverse()) await child.stop().catch(() => undefined);
  }
}

export async function measureScale(options: ScaleOptions, progress: (line: string) => void): Promise<ScaleResult> {
  const off = await measureMode('budget off', options, progress);
  const on = await measureMode('budget on', options, progress);
  const p99Ratio = round(on.p99Ms / Math.max(0.001, off.p99Ms), 3);
  return { organizations: options.organizations, connections: options.connections, durationSeconds: options.durationSeconds, on, off, p99Ratio, pass: p99Ratio <= TARGET };
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
