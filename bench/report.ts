/** The benchmark's table (Markdown, so it can go into docs/performance.md as printed) and its targets. */
import type { ColdStartResult } from './cold-start';
import { kib } from './cold-start';
import type { measureBatch, measureLoad, measureRoundTrips, measureSingle, measureSweep } from './phases';
import { round } from './stats';

export interface BenchResults {
  readonly latencyMs: number;
  readonly roundTrips: Awaited<ReturnType<typeof measureRoundTrips>>;
  readonly single: Awaited<ReturnType<typeof measureSingle>>;
  readonly batch: Awaited<ReturnType<typeof measureBatch>>;
  readonly load: Awaited<ReturnType<typeof measureLoad>>;
  readonly sweep: Awaited<ReturnType<typeof measureSweep>>;
  readonly coldStart: ColdStartResult;
}

export interface Target {
  readonly id: string;
  readonly description: string;
  readonly value: number;
  readonly limit: number;
  readonly comparison: '<=' | '==';
  readonly pass: boolean;
}

/** The targets, checked against this run's figures. */
export function checkTargets(r: BenchResults): Target[] {
  const cold = coldRatios(r.coldStart);
  const loadErrors = r.load.errors + r.load.timeouts + r.load.non2xx;
  const target = (id: string, description: string, value: number, comparison: '<=' | '==', limit: number, also = true): Target => ({
    id,
    description,
    value,
    limit,
    comparison,
    pass: also && (comparison === '<=' ? value <= limit : value === limit),
  });
  const { missPerRequest: miss, hitPerRequest: hit } = r.roundTrips;
  return [
    target('single', 'one message <= 1.15x direct SES', r.single.ratio, '<=', 1.15),
    target('batch', `${r.batch.size} messages <= 1.10x the hand-written pool`, r.batch.ratio, '<=', 1.1),
    target('coldInit', 'cold init <= 1.3x the SES-only bundle', cold.asDeployed, '<=', 1.3),
    // Every sample must hit the mark: the worst one is reported, the best one checked too.
    // Two since the key is checked before the body is read: the key, then the Organization of a
    // known key (docs/decisions.md, "Order of checks"); one would need the Organization id before parsing.
    // Three since audit round 2 (finding 1): a key counts only while its user still holds it, and
    // that is checked before the body is read, as the rest of the key check is.
    target('dynamodbMiss', "DynamoDB round trips on an auth-cache miss == 3 (key, the key's holder, then Organization)", miss.max, '==', 3, miss.min === 3),
    target('dynamodbHit', 'DynamoDB round trips on an auth-cache hit == 0', hit.max, '==', 0),
    // Recording a key's last use (docs/keys.md) is one write a key and hour, never one a request.
    target('lastUseWrites', 'last-use writes per key and hour <= 1', r.roundTrips.lastUseWritesPerKeyHour.max, '<=', 1),
    // A message reported Sent must have reached the emulator, too.
    target('loadErrors', 'zero errors under load', loadErrors, '==', 0, r.load.mailStored >= r.load.status['2xx']),
  ];
}

export function coldRatios(c: ColdStartResult) {
  const base = c.variants.sesOnly!.importMs.median;
  const cpuBase = c.variants.sesOnly!.cpuMs.median;
  const ratio = (name: string) => round(c.variants[name]!.importMs.median / base, 3);
  const cpuRatio = (name: string) => round(c.variants[name]!.cpuMs.median / cpuBase, 3);
  return {
    asDeployed: ratio('handler'),
    sdkTraced: ratio('handlerSdkTraced'),
    floor: ratio('floor'),
    /** The same bundle with Node's `--enable-source-maps`, against the bundle as deployed. */
    sourceMaps: round(c.variants.handlerSourceMaps!.importMs.median / c.variants.handler!.importMs.median, 3),
    /** The floor with the handler's start-up code read but never run, against the floor. */
    unrun: round(c.variants.floorUnrun!.importMs.median / c.variants.floor!.importMs.median, 3),
    /**
     * Milliseconds of import a KiB: of code read but never run (the row above), and of the
     * handler's start-up code above the floor, which it reads and partly runs.
     */
    msPerKib: {
      unrun: round((c.variants.floorUnrun!.importMs.median - c.variants.floor!.importMs.median) / (c.bundles.floorUnrun.unrunBytes / 1024), 3),
      handlerAboveFloor: round((c.variants.handler!.importMs.median - c.variants.floor!.importMs.median) / ((c.bundles.handler.bytes - c.bundles.floor.bytes) / 1024), 3),
    },
    /** Both imported after node:http, as Lambda's runtime has loaded it by then (bench/cold-start.ts). */
    runtimeFirst: round(c.variants.handlerRuntimeFirst!.importMs.median / c.variants.sesOnlyRuntimeFirst!.importMs.median, 3),
    cpu: { asDeployed: cpuRatio('handler'), sdkTraced: cpuRatio('handlerSdkTraced'), floor: cpuRatio('floor') },
  };
}

const ms = (value: number) => `${value >= 1000 ? Math.round(value).toLocaleString('en-US') : round(value, 1)} ms`;
const times = (value: number) => `${round(value, 2).toFixed(2)}×`;

export function renderTable(r: BenchResults, targets: readonly Target[]): string {
  const verdict = (id: string) => (targets.find((t) => t.id === id)?.pass ? 'PASS' : 'MISS');
  const rows: string[][] = [
    ['Measure', 'Service', 'Baseline', 'Ratio', 'Target', 'Result'],
    [
      `(a) 1 message: API over HTTP vs 1 direct SendEmail (median of ${r.single.runs})`,
      ms(r.single.api.median),
      ms(r.single.direct.median),
      times(r.single.ratio),
      '≤ 1.15×',
      verdict('single'),
    ],
    [
      `(b) ${r.batch.size} messages in 1 request vs hand-written pool, both at concurrency ${r.batch.concurrency} (median of ${r.batch.runs})`,
      ms(r.batch.api.median),
      ms(r.batch.handPool.median),
      times(r.batch.ratio),
      '≤ 1.10×',
      verdict('batch'),
    ],
  ];
  if (r.batch.sequential) {
    rows.push([
      `(b) ${r.batch.size} messages in 1 request vs ${r.batch.size} sequential SendEmail calls`,
      ms(r.batch.api.median),
      ms(r.batch.sequential.median),
      times(r.batch.ratioToSequential ?? Number.NaN),
      '—',
      'info',
    ]);
  }
  rows.push(
    [
      `(c) load: ${r.load.connections} connections × ${round(r.load.durationSeconds, 0)} s, 1 message per request (autocannon)`,
      `${r.load.requestsPerSecond} req/s, p50 ${r.load.latencyMs.p50} ms, p99 ${r.load.latencyMs.p99} ms`,
      `errors ${r.load.errors}, timeouts ${r.load.timeouts}, non-2xx ${r.load.non2xx}`,
      '—',
      '0 errors',
      verdict('loadErrors'),
    ],
    ...coldRows(r.coldStart, verdict('coldInit')),
    [
      `(e) DynamoDB reads per API request, auth-cache miss (${r.roundTrips.samples} fresh keys)`,
      `${r.roundTrips.missPerRequest.max} (${Object.keys(r.roundTrips.missOperations).join(', ')})`,
      '—',
      '—',
      '3',
      verdict('dynamodbMiss'),
    ],
    ['(e) DynamoDB requests per API request, auth-cache hit', String(r.roundTrips.hitPerRequest.max), '—', '—', '0', verdict('dynamodbHit')],
    ['(e) last-use writes per key and hour (the first call of the hour)', String(r.roundTrips.lastUseWritesPerKeyHour.max), '—', '—', '≤ 1', verdict('lastUseWrites')],
  );
  return markdown(rows);
}

/** The cold init rows (d): wall time is the target's measure; CPU time, less moved by a busy machine, beside it. */
function coldRows(c: ColdStartResult, coldVerdict: string): string[][] {
  const cold = coldRatios(c);
  const v = c.variants;
  const b = c.bundles;
  const cpu = (name: string, ratio: number) => `CPU ${ms(v[name]!.cpuMs.median)}, ${times(ratio)}`;
  const base = `${ms(v.sesOnly!.importMs.median)} (${kib(b.sesOnly.bytes)}; CPU ${ms(v.sesOnly!.cpuMs.median)})`;
  return [
    [
      `(d) cold init: import of the handler bundle, as deployed (active tracing, no SDK subsegments) vs SES-only bundle (median of ${v.handler!.importMs.n})`,
      `${ms(v.handler!.importMs.median)} (${kib(b.handler.bytes)}; ${cpu('handler', cold.cpu.asDeployed)})`,
      base,
      times(cold.asDeployed),
      '≤ 1.3×',
      coldVerdict,
    ],
    [
      '(d) cold init: the same bundle with traceSdkCalls on (POWERTOOLS_TRACE_ENABLED=true: Powertools Tracer and the X-Ray SDK)',
      `${ms(v.handlerSdkTraced!.importMs.median)} (${cpu('handlerSdkTraced', cold.cpu.sdkTraced)})`,
      base,
      times(cold.sdkTraced),
      '—',
      'info',
    ],
    [
      "(d) cold init: the same bundle with Node's --enable-source-maps (as deployed before the logger mapped stacks itself) vs the bundle as deployed",
      `${ms(v.handlerSourceMaps!.importMs.median)} (CPU ${ms(v.handlerSourceMaps!.cpuMs.median)})`,
      ms(v.handler!.importMs.median),
      times(cold.sourceMaps),
      '—',
      'info',
    ],
    [
      '(d) cold init: floor (SES + DynamoDB clients, Powertools Logger + Metrics, no service code)',
      `${ms(v.floor!.importMs.median)} (${kib(b.floor.bytes)}; ${cpu('floor', cold.cpu.floor)})`,
      base,
      times(cold.floor),
      '—',
      'info',
    ],
    [
      "(d) cold init: both bundles imported after node:http is loaded, as in Lambda, whose runtime interface client requires it for itself before it loads the handler: the same milliseconds added to a smaller baseline",
      `${ms(v.handlerRuntimeFirst!.importMs.median)} (CPU ${ms(v.handlerRuntimeFirst!.cpuMs.median)})`,
      `${ms(v.sesOnlyRuntimeFirst!.importMs.median)} (CPU ${ms(v.sesOnlyRuntimeFirst!.cpuMs.median)})`,
      times(cold.runtimeFirst),
      '—',
      'info',
    ],
    [
      `(d) cold init: the floor plus the handler's whole start-up chunk as code read but never run (in a function nothing calls) vs floor: ${cold.msPerKib.unrun} ms a KiB, against ${cold.msPerKib.handlerAboveFloor} ms a KiB for the handler's start-up code above the floor`,
      `${ms(v.floorUnrun!.importMs.median)} (+${kib(b.floorUnrun.unrunBytes)}; CPU ${ms(v.floorUnrun!.cpuMs.median)})`,
      ms(v.floor!.importMs.median),
      times(cold.unrun),
      '—',
      'info',
    ],
  ];
}

/** The cold init rows alone (`--cold`), with the target checked. */
export function renderColdRows(c: ColdStartResult): string {
  return markdown([['Measure', 'Service', 'Baseline', 'Ratio', 'Target', 'Result'], ...coldRows(c, coldRatios(c).asDeployed <= 1.3 ? 'PASS' : 'MISS')]);
}

export function renderSweep(r: BenchResults): string | undefined {
  if (r.sweep.length === 0) return undefined;
  const rows = [
    ['SEND_CONCURRENCY', `${r.batch.size} messages, API`, 'hand-written pool', 'ratio', `ideal ⌈${r.batch.size}/C⌉ × ${r.latencyMs} ms`],
    ...r.sweep.map((row) => [
      String(row.concurrency),
      ms(row.api.median),
      ms(row.handPool.median),
      times(row.ratio),
      ms(Math.ceil(r.batch.size / row.concurrency) * r.latencyMs),
    ]),
  ];
  return markdown(rows);
}

function markdown(rows: readonly string[][]): string {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((row) => row[col]!.length)));
  const line = (row: readonly string[]) => `| ${row.map((cell, col) => cell.padEnd(widths[col]!)).join(' | ')} |`;
  return [line(rows[0]!), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line)].join('\n');
}

export function renderTargets(targets: readonly Target[]): string {
  return targets.map((t) => `${t.pass ? 'PASS' : 'MISS'}  ${t.description}: ${t.value}`).join('\n');
}
