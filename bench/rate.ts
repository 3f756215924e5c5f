/**
 * The rate-limited scenarios of `npm run bench` (docs/performance.md; issue 11): SES enforcing a
 * maximum send rate (the local rate gate) 20 ms behind a latency proxy, the service learning the
 * rate from GetAccount, and local stacks as function instances sharing one table. For each
 * scenario: messages sent / asked, elapsed time / ideal time (ideal = (N − burst) / rate, burst
 * being the second's worth SES lets go at once), and throttled SES calls per message sent.
 */
import { startDynamoDb, startSesEmulator } from '../infra/local/emulators';
import type { RunningService } from '../infra/local/emulators';
import type { RateGateStats, RunningRateGate } from '../infra/local/ses-rate-gate';
import { startRateGate } from '../infra/local/ses-rate-gate';
import type { LocalStack } from '../infra/local/stack';
import { startLocalStack } from '../infra/local/stack';
import type { RunningProxy } from './proxy';
import { startProxy } from './proxy';
import { round } from './stats';

export interface RateScenario {
  readonly name: string;
  readonly rate: number;
  readonly asked: number;
  readonly sent: number;
  /** Messages reported Throttled without being tried (they did not fit before the deadline). */
  readonly untried: number;
  readonly elapsedMs: number;
  readonly idealMs: number;
  readonly elapsedOverIdeal: number;
  readonly throttledCallsPerSent: number;
  /** What SES received equals what the API reported Sent. */
  readonly nothingLostOrDoubled: boolean;
  /** Overload only: a message sent once Retry-After has passed went through without a throttled call. */
  readonly retryAfterHonest?: boolean;
}

export interface Rig {
  readonly gate: RunningRateGate;
  readonly stacks: LocalStack[];
  close(): Promise<void>;
}

const LATENCY_MS = 20;
const MESSAGES = 100;

export function body(organizationId: string, tag: string, count = MESSAGES, extra: Record<string, unknown> = {}) {
  return JSON.stringify({
    OrganizationId: organizationId,
    Messages: Array.from({ length: count }, (_, i) => ({ From: 'bench@example.com', To: [`r${i}@example.org`], Subject: `${tag} ${i}`, TextContent: 'rate bench', ...extra })),
  });
}

export interface Answer {
  readonly status: number;
  readonly retryAfter: number | undefined;
  readonly statuses: string[];
}

export async function post(stack: LocalStack, apiKey: string, payload: string): Promise<Answer> {
  const response = await fetch(stack.sendUrl, { method: 'POST', headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' }, body: payload });
  const parsed = (await response.json()) as { Messages?: { Status: string }[] };
  const retryAfter = response.headers.get('retry-after');
  return { status: response.status, retryAfter: retryAfter === null ? undefined : Number(retryAfter), statuses: (parsed.Messages ?? []).map((m) => m.Status) };
}

export async function storedCount(sesUrl: string): Promise<number> {
  const { emails } = (await (await fetch(`${sesUrl}/store`)).json()) as { emails: unknown[] };
  return emails.length;
}

/** dynalite, the emulator, a gate at `rate`, a latency proxy, and `instances` local stacks on them. */
export async function rig(rate: number, instances: number, functionTimeoutMs?: number): Promise<Rig> {
  const started: { close(): Promise<void> }[] = [];
  try {
    const dynamo: RunningService = await startDynamoDb();
    started.push(dynamo);
    const emulator = await startSesEmulator();
    started.push(emulator);
    await fetch(`${emulator.endpoint}/clear-store`, { method: 'POST' });
    const gate = await startRateGate({ upstream: emulator.endpoint, maxSendRate: rate });
    started.push(gate);
    const proxy: RunningProxy = await startProxy({ upstream: gate.endpoint, delayMs: LATENCY_MS });
    started.push(proxy);
    const stacks: LocalStack[] = [];
    for (let i = 0; i < instances; i++) {
      const stack = await startLocalStack({
        port: 0,
        oidcPort: 0,
        data: 'memory',
        dynamodbEndpoint: dynamo.endpoint,
        sesEndpoint: proxy.endpoint,
        tableName: 'bench-rate',
        ...(functionTimeoutMs && { functionTimeoutMs }),
        // The service is not told the rate: it learns it from GetAccount, as in AWS.
        serviceEnv: { AUTH_CACHE_SECONDS: '30' },
      });
      stacks.push(stack);
      started.push({ close: () => stack.stop() });
    }
    return {
      gate,
      stacks,
      close: async () => {
        for (const item of started.reverse()) await item.close().catch(() => undefined);
      },
    };
  } catch (error) {
    for (const item of started.reverse()) await item.close().catch(() => undefined);
    throw error;
  }
}

/** `requests` requests of 100 messages spread over the rig's stacks, all at once. */
async function scenario(name: string, rate: number, instances: number, requests: number, functionTimeoutMs?: number): Promise<RateScenario> {
  const r = await rig(rate, instances, functionTimeoutMs);
  try {
    const demo = r.stacks[0]!.demo!;
    const before: RateGateStats = r.gate.stats();
    const started = performance.now();
    const answers = await Promise.all(Array.from({ length: requests }, (_, i) => post(r.stacks[i % r.stacks.length]!, demo.apiKey, body(demo.organizationId, `${name}-${i}`))));
    const elapsedMs = performance.now() - started;
    const after = r.gate.stats();
    const statuses = answers.flatMap((a) => a.statuses);
    const sent = statuses.filter((s) => s === 'Sent').length;
    const untried = statuses.filter((s) => s === 'Failed').length;
    const asked = requests * MESSAGES;
    const burst = Math.max(1, Math.floor(rate));
    // Ideal: what could be sent in the time taken, or all of it: (N − burst) / rate.
    const idealMs = (Math.max(0, sent - burst) / rate) * 1_000;
    let retryAfterHonest: boolean | undefined;
    if (untried > 0) {
      const wait = Math.max(...answers.map((a) => a.retryAfter ?? 0));
      await new Promise((resolve) => setTimeout(resolve, wait * 1_000));
      const beforeRetry = r.gate.stats().throttled;
      const retry = await post(r.stacks[0]!, demo.apiKey, body(demo.organizationId, `${name}-retry`, 1));
      retryAfterHonest = retry.status === 200 && r.gate.stats().throttled === beforeRetry && answers.every((a) => a.retryAfter !== undefined);
    }
    const stored = await storedCount(r.gate.endpoint);
    return {
      name,
      rate,
      asked,
      sent,
      untried,
      elapsedMs: round(elapsedMs, 0),
      idealMs: round(idealMs, 0),
      elapsedOverIdeal: round(elapsedMs / Math.max(1, idealMs), 3),
      throttledCallsPerSent: round((after.throttled - before.throttled) / Math.max(1, sent), 3),
      nothingLostOrDoubled: stored === sent + (retryAfterHonest === undefined ? 0 : 1),
      ...(retryAfterHonest !== undefined && { retryAfterHonest }),
    };
  } finally {
    await r.close();
  }
}

export async function measureRate(progress: (line: string) => void): Promise<RateScenario[]> {
  // The stacks run in this process: their request logs and metric documents would drown the table.
  process.env.POWERTOOLS_LOG_LEVEL = 'ERROR';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  const results: RateScenario[] = [];
  progress('rate: 1 request × 100 messages, SES at 14/s…');
  results.push(await scenario('1 × 100 at 14/s', 14, 1, 1));
  progress('rate: 8 concurrent requests × 100, SES at 40/s, rate learnt from GetAccount…');
  results.push(await scenario('8 × 100 at 40/s', 40, 1, 8));
  progress('rate: 2 instances × 4 concurrent × 100, SES at 40/s, one account…');
  results.push(await scenario('2 instances × 4 × 100 at 40/s', 40, 2, 8));
  progress('rate: overload, 4 × 100 at 14/s with a 6 s function timeout…');
  results.push(await scenario('overload: 4 × 100 at 14/s, 6 s timeout', 14, 1, 4, 6_000));
  return results;
}

export function rateTargetsMet(rows: readonly RateScenario[]): { id: string; description: string; pass: boolean; value: string }[] {
  return rows.map((row) => {
    const fits = row.untried === 0;
    const pass =
      row.nothingLostOrDoubled &&
      row.throttledCallsPerSent <= 0.05 &&
      (fits ? row.sent === row.asked && row.elapsedOverIdeal <= 1.15 : row.retryAfterHonest === true && row.sent > 0);
    return {
      id: `rate: ${row.name}`,
      description: fits
        ? `${row.name}: all sent, ≤ 1.15× ideal time, ≤ 0.05 throttled calls per sent, nothing lost or doubled`
        : `${row.name}: what fits is sent, the rest Throttled untried, Retry-After honest, nothing lost or doubled`,
      pass,
      value: `${row.sent}/${row.asked} sent, ${row.elapsedOverIdeal}× ideal, ${row.throttledCallsPerSent} throttled/sent`,
    };
  });
}

export function renderRate(rows: readonly RateScenario[]): string {
  const header = ['scenario (SES at the rate, 20 ms latency)', 'sent / asked', 'elapsed / ideal', 'throttled calls / sent', 'untried', 'SES got = Sent'];
  const lines = rows.map((r) => [
    r.name,
    `${r.sent} / ${r.asked}`,
    `${(r.elapsedMs / 1_000).toFixed(2)} s / ${(r.idealMs / 1_000).toFixed(2)} s = ${r.elapsedOverIdeal}×`,
    String(r.throttledCallsPerSent),
    r.untried === 0 ? '0' : `${r.untried} (Retry-After ${r.retryAfterHonest ? 'honest' : 'NOT honest'})`,
    r.nothingLostOrDoubled ? 'yes' : 'NO',
  ]);
  return markdownTable(header, lines);
}

/** A Markdown table, columns padded to their widest cell. */
export function markdownTable(header: readonly string[], lines: readonly string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const row = (cells: readonly string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [row(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...lines.map(row)].join('\n');
}
