/**
 * The benchmark's measurements, one function per row group of the table. Each takes the
 * running children and clients, loops a bounded number of times, and returns plain figures.
 * Service and baseline take turns within a loop, so the machine's drift hits both alike.
 */
import autocannon from 'autocannon';
import { DEFAULTS } from '../functions/shared/runtime/config';
import { generateApiKey } from '../functions/shared/domain/api-keys';
import type { DynamoDbAdminStore } from '../infra/admin/admin-store';
import type { Child } from './child';
import type { EmulatorsInfo, OperationCounts } from './emulators-child';
import type { StackInfo } from './stack-child';
import { median, round, summary, timed } from './stats';
import type { Tenant } from './traffic';
import { allSent, apiClient, directSes, sendBody } from './traffic';

export interface BenchContext {
  readonly emulators: Child<EmulatorsInfo>;
  readonly stack: Child<StackInfo>;
  readonly tenant: Tenant;
  readonly api: ReturnType<typeof apiClient>;
  readonly direct: ReturnType<typeof directSes>;
  readonly admin: DynamoDbAdminStore;
  readonly progress: (line: string) => void;
}

const total = (counts: OperationCounts) => Object.values(counts).reduce((sum, n) => sum + n, 0);

/** A new Organization, member, sender domain and key: nothing of it is in any cache yet. */
async function freshTenant(admin: DynamoDbAdminStore, senderDomain: string): Promise<Tenant> {
  const organization = await admin.createOrganization({ name: 'Bench' });
  const user = await admin.createUser({ email: `bench-${organization.id}@example.net` });
  await admin.addMember(organization.id, user.id);
  await admin.addSender(organization.id, { domain: senderDomain });
  const { key } = await admin.generateKey(user.id);
  return { apiKey: key, organizationId: organization.id, senderDomain };
}

async function countedRequest(ctx: BenchContext, tenant: Tenant, expectStatus: number) {
  await ctx.emulators.call('resetCounts');
  const answer = await ctx.api.post(tenant, sendBody(tenant, 1));
  const counts = await ctx.emulators.call<OperationCounts>('counts');
  if (answer.status !== expectStatus) throw new Error(`expected ${expectStatus} from the API, got ${answer.status}: ${answer.body.slice(0, 300)}`);
  return counts;
}

/** (e) DynamoDB requests per API request, counted on the wire by the emulators' proxy. */
export async function measureRoundTrips(ctx: BenchContext, samples: number) {
  const miss: number[] = [];
  const hit: number[] = [];
  const lastUse: number[] = [];
  const operations: Record<string, number> = {};
  for (let i = 0; i < samples; i++) {
    const tenant = await freshTenant(ctx.admin, ctx.tenant.senderDomain);
    const first = await countedRequest(ctx, tenant, 200);
    const second = await countedRequest(ctx, tenant, 200);
    // The first call of a key in an hour also records its use (docs/keys.md): one UpdateItem a
    // key and hour, counted apart from the auth path's reads; the second call must write nothing.
    const writes = first.UpdateItem ?? 0;
    miss.push(total(first) - writes);
    lastUse.push(writes + (second.UpdateItem ?? 0));
    hit.push(total(second));
    for (const [op, n] of Object.entries(first)) if (op !== 'UpdateItem') operations[op] = (operations[op] ?? 0) + n;
  }
  // A well-formed key nobody holds: read once, then remembered briefly (the negative cache).
  const stranger = { ...ctx.tenant, apiKey: generateApiKey() };
  const unknownFirst = total(await countedRequest(ctx, stranger, 401));
  const unknownAgain = total(await countedRequest(ctx, stranger, 401));
  const result = {
    samples,
    missPerRequest: { max: Math.max(...miss), min: Math.min(...miss), values: miss },
    hitPerRequest: { max: Math.max(...hit), min: Math.min(...hit), values: hit },
    lastUseWritesPerKeyHour: { max: Math.max(...lastUse), values: lastUse },
    missOperations: operations,
    unknownKey: { first: unknownFirst, again: unknownAgain },
  };
  ctx.progress(`DynamoDB requests per API request: miss ${miss.join(',')}, hit ${hit.join(',')}, last-use writes per key-hour ${lastUse.join(',')}, unknown key ${unknownFirst} then ${unknownAgain}`);
  return result;
}

/** (a) one message through the API against one direct SendEmail. */
export async function measureSingle(ctx: BenchContext, runs: number) {
  const api: number[] = [];
  const direct: number[] = [];
  let failures = 0;
  const warmup = 5;
  for (let i = -warmup; i < runs; i++) {
    const callApi = async () => {
      const { ms, value } = await timed(() => ctx.api.post(ctx.tenant, sendBody(ctx.tenant, 1, i + warmup)));
      if (!allSent(value, 1)) failures++;
      if (i >= 0) api.push(ms);
    };
    const callDirect = async () => {
      const { ms } = await timed(() => ctx.direct.send(ctx.tenant, i + warmup));
      if (i >= 0) direct.push(ms);
    };
    if (i % 2 === 0) {
      await callApi();
      await callDirect();
    } else {
      await callDirect();
      await callApi();
    }
  }
  await ctx.emulators.call('clearMail');
  const ratio = median(api) / median(direct);
  ctx.progress(`one message: API ${round(median(api))} ms, direct SendEmail ${round(median(direct))} ms, ratio ${round(ratio, 2)}`);
  return { runs, warmup, api: summary(api), direct: summary(direct), ratio: round(ratio, 3), failures };
}

/** (b) the batch in one request against a hand-written pool, and against sequential sends. */
export async function measureBatch(
  ctx: BenchContext,
  options: { runs: number; size: number; concurrency: number; sequentialRuns: number; api?: BenchContext['api']; label?: string },
) {
  const client = options.api ?? ctx.api;
  const api: number[] = [];
  const pool: number[] = [];
  let failures = 0;
  const warmup = 3;
  for (let i = -warmup; i < options.runs; i++) {
    const callApi = async () => {
      const { ms, value } = await timed(() => client.post(ctx.tenant, sendBody(ctx.tenant, options.size)));
      if (!allSent(value, options.size)) failures++;
      if (i >= 0) api.push(ms);
    };
    const callPool = async () => {
      const { ms } = await timed(() => ctx.direct.pool(ctx.tenant, options.size, options.concurrency));
      if (i >= 0) pool.push(ms);
    };
    if (i % 2 === 0) {
      await callApi();
      await callPool();
    } else {
      await callPool();
      await callApi();
    }
    await ctx.emulators.call('clearMail');
  }
  const sequential: number[] = [];
  for (let i = 0; i < options.sequentialRuns; i++) {
    sequential.push((await timed(() => ctx.direct.sequential(ctx.tenant, options.size))).ms);
    await ctx.emulators.call('clearMail');
  }
  const ratio = median(api) / median(pool);
  ctx.progress(
    `${options.label ?? 'batch'}: ${options.size} messages at concurrency ${options.concurrency}: API ${round(median(api))} ms, hand-written pool ${round(median(pool))} ms, ratio ${round(ratio, 2)}` +
      (sequential.length > 0 ? `, sequential ${round(median(sequential), 0)} ms` : ''),
  );
  return {
    runs: options.runs,
    warmup,
    size: options.size,
    concurrency: options.concurrency,
    api: summary(api),
    handPool: summary(pool),
    ratio: round(ratio, 3),
    sequential: sequential.length > 0 ? summary(sequential) : undefined,
    ratioToSequential: sequential.length > 0 ? round(median(api) / median(sequential), 3) : undefined,
    failures,
  };
}

/** (c) requests per second under concurrent load, with every kind of error counted. */
export async function measureLoad(ctx: BenchContext, options: { connections: number; durationSeconds: number }) {
  await ctx.emulators.call('clearMail');
  await ctx.emulators.call('resetCounts');
  ctx.progress(`load: ${options.connections} connections for ${options.durationSeconds} s (autocannon), one message per request…`);
  const result = await autocannon({
    url: ctx.stack.info.sendUrl,
    method: 'POST',
    connections: options.connections,
    duration: options.durationSeconds,
    timeout: 10,
    headers: { authorization: `Bearer ${ctx.tenant.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(sendBody(ctx.tenant, 1)),
  });
  const dynamodbRequests = total(await ctx.emulators.call<OperationCounts>('counts'));
  const mailStored = await ctx.emulators.call<number>('mailCount');
  await ctx.emulators.call('clearMail');
  const figures = {
    connections: options.connections,
    durationSeconds: round(result.duration, 2),
    requests: result.requests.total,
    requestsPerSecond: round(result.requests.average, 1),
    latencyMs: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max },
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    status: { '2xx': result['2xx'], '4xx': result['4xx'], '5xx': result['5xx'] },
    // At least one stored message per 2xx; requests still in flight when autocannon stops add a
    // few more. Fewer than the 2xx count would mean a message reported Sent that SES never got.
    mailStored,
    dynamodbRequests,
  };
  ctx.progress(
    `load: ${figures.requestsPerSecond} req/s, p50 ${figures.latencyMs.p50} ms, p99 ${figures.latencyMs.p99} ms, errors ${figures.errors}, timeouts ${figures.timeouts}, non-2xx ${figures.non2xx}, mails stored ${mailStored}/${figures.status['2xx']}, DynamoDB requests ${dynamodbRequests}`,
  );
  return figures;
}

/** The batch at several SEND_CONCURRENCY values, each on a stack of its own. */
export async function measureSweep(ctx: BenchContext, options: { values: readonly number[]; runs: number; size: number }) {
  const rows = [];
  for (const concurrency of options.values) {
    const info = await ctx.stack.call<StackInfo>('startStack', {
      AUTH_CACHE_SECONDS: String(DEFAULTS.authCacheSeconds),
      SEND_CONCURRENCY: String(concurrency),
    });
    const api = apiClient(info.sendUrl);
    try {
      const tenant = { apiKey: info.apiKey, organizationId: info.organizationId, senderDomain: info.senderDomain };
      const warm = await api.post(tenant, sendBody(tenant, 1));
      if (!allSent(warm, 1)) throw new Error(`the sweep stack at concurrency ${concurrency} answered ${warm.status}: ${warm.body.slice(0, 300)}`);
      const batch = await measureBatch(
        { ...ctx, tenant },
        { runs: options.runs, size: options.size, concurrency, sequentialRuns: 0, api, label: 'sweep' },
      );
      rows.push({ concurrency, api: batch.api, handPool: batch.handPool, ratio: batch.ratio, failures: batch.failures });
    } finally {
      api.close();
      await ctx.stack.call('stopStack', info.sendUrl);
    }
  }
  return rows;
}
