/** The benchmark's command line: flags, each with an environment variable and a default. */
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { DEFAULTS } from '../functions/shared/runtime/config';

export interface BenchOptions {
  readonly latencyMs: number;
  readonly runs: number;
  readonly batchRuns: number;
  readonly batchSize: number;
  readonly sequentialRuns: number;
  readonly concurrency: number;
  readonly connections: number;
  readonly durationSeconds: number;
  readonly coldRuns: number;
  readonly missSamples: number;
  readonly attachmentBytes: number;
  readonly sweep: readonly number[];
  readonly out: string;
  readonly maxMinutes: number;
  /** Only the rate-limited scenarios (SES enforcing a send rate). */
  readonly rateOnly: boolean;
  /** Only the templates comparison (bench/templates.ts): a templated batch against the same batch written out. */
  readonly templatesOnly: boolean;
  /** Only the scale comparison (bench/scale.ts): 50 Organizations on two instances, budget on against off. */
  readonly scaleOnly: boolean;
  /** Only the tracking figures (bench/tracking.ts): rewriting a 100 KB tracked message, and an untracked send with and without the tracker. */
  readonly trackingOnly: boolean;
  /** Only the cold init rows (bench/cold-start.ts). */
  readonly coldOnly: boolean;
  /** The Node.js the cold init imports run in (undefined: this one), e.g. the Lambda runtime's major. */
  readonly coldNode: string | undefined;
  /** The one CPU the cold init imports run on (`taskset`), or undefined: any (bench/cold-start.ts). */
  readonly coldCpu: number | undefined;
}

interface Spec {
  readonly flag: string;
  readonly env: string;
  readonly fallback: number;
  readonly quick?: number;
  readonly min: number;
  readonly max: number;
  readonly help: string;
}

const NUMBERS = {
  latencyMs: { flag: 'latency-ms', env: 'BENCH_SES_LATENCY_MS', fallback: 50, min: 0, max: 2_000, help: 'latency added to every SES call by the proxy' },
  runs: { flag: 'runs', env: 'BENCH_RUNS', fallback: 40, quick: 12, min: 3, max: 1_000, help: 'one-message runs, each of the API and of a direct SendEmail' },
  batchRuns: { flag: 'batch-runs', env: 'BENCH_BATCH_RUNS', fallback: 15, quick: 3, min: 1, max: 100, help: 'runs of the 100-message request and of the hand-written pool' },
  batchSize: { flag: 'batch-size', env: 'BENCH_BATCH_SIZE', fallback: DEFAULTS.maxMessages, min: 1, max: DEFAULTS.maxMessages, help: 'messages in the batch request' },
  sequentialRuns: { flag: 'sequential-runs', env: 'BENCH_SEQUENTIAL_RUNS', fallback: 1, min: 0, max: 10, help: 'runs of the batch sent one message after the other (0 skips it)' },
  concurrency: { flag: 'concurrency', env: 'BENCH_CONCURRENCY', fallback: DEFAULTS.sendConcurrency, min: 1, max: 256, help: "SEND_CONCURRENCY of the stack, and the hand-written pool's size" },
  connections: { flag: 'connections', env: 'BENCH_CONNECTIONS', fallback: 32, quick: 16, min: 1, max: 1_000, help: 'concurrent connections of the load test' },
  durationSeconds: { flag: 'duration', env: 'BENCH_DURATION', fallback: 15, quick: 4, min: 1, max: 600, help: 'seconds of the load test' },
  coldRuns: { flag: 'cold-runs', env: 'BENCH_COLD_RUNS', fallback: 30, quick: 5, min: 1, max: 100, help: 'fresh node processes per bundle for the cold init' },
  missSamples: { flag: 'miss-samples', env: 'BENCH_MISS_SAMPLES', fallback: 5, quick: 2, min: 1, max: 100, help: 'fresh tenants used to count DynamoDB requests on a miss and a hit' },
  attachmentBytes: { flag: 'attachment-bytes', env: 'BENCH_ATTACHMENT_BYTES', fallback: 0, min: 0, max: 38_000, help: 'a PDF of this many bytes attached to every message, of the API and of the direct SendEmail alike (0: none; 38000 keeps a 100-message batch under 5 MiB)' },
  maxMinutes: { flag: 'max-minutes', env: 'BENCH_MAX_MINUTES', fallback: 10, min: 1, max: 120, help: 'the run is aborted (exit 2) if it takes longer than this' },
} as const satisfies Record<string, Spec>;

const DEFAULT_SWEEP = '8,16,32,48,64';
const DEFAULT_OUT = 'bench-results/latest.json';

export function helpText(): string {
  const rows = Object.values(NUMBERS).map((s: Spec) => {
    const flag = `--${s.flag} <n>`.padEnd(24);
    const quick = s.quick === undefined ? '' : `, --quick: ${s.quick}`;
    return `  ${flag}${s.help} (default ${s.fallback}${quick}; env ${s.env})`;
  });
  return [
    'npm run bench [-- options]',
    '',
    'Starts dynalite and the SES emulator (SES behind a proxy that adds latency) and the local',
    'stack, all on 127.0.0.1, then measures the service against baselines taken in the same run,',
    'prints one table with PASS/MISS per target, and writes every figure as JSON.',
    '',
    'Options:',
    ...rows,
    `  --sweep <list>          SEND_CONCURRENCY values to compare on the batch request, each on a`,
    `                          stack of its own (median of min(batch-runs, 7))`,
    `                          (default ${DEFAULT_SWEEP}, --quick: none; "none" skips it; env BENCH_SWEEP)`,
    `  --out <file>            where the JSON goes (default ${DEFAULT_OUT}; env BENCH_OUT); a`,
    '                          timestamped copy is written beside it',
    '  --quick                 fewer runs and a shorter load test (a smoke run, under a minute)',
    '  --rate-only             only the rate-limited and fairness scenarios (SES enforcing a send rate; about three minutes)',
    '  --templates             only the templates comparison: a templated 100-message request against the same one written out (--batch-runs rounds)',
    '  --scale                 only the scale comparison: 50 Organizations on two instances sharing one table,',
    '                          one-message requests from --connections loops for --duration s, the send budget',
    '                          on (SES_MAX_SEND_RATE 1000) against off; writes per item, largest item, p50/p99',
    '                          (about a minute)',
    '  --tracking              only the open and click tracking figures: a tracked 100 KB HTML message rewritten',
    '                          by the local SES front (p50), and an untracked send through the front with and',
    '                          without the tracker (ratio of medians); 5 x --runs of each (seconds)',
    '  --cold                  only the cold init rows (d): --cold-runs fresh node processes per bundle',
    '  --node <path|lambda>    the node binary the cold init imports run in (default: this one; env BENCH_NODE);',
    '                          "lambda": the Node.js major Lambda runs the functions on, fetched once from the',
    '                          npm registry into bench-results/ on Linux x64 (see docs/performance.md, "Cold start")',
    '  --cold-cpu <n|none>     the one CPU the cold init imports run on, with taskset, as a Lambda function of',
    '                          1,024 MB gets about 0.6 of one (default: the last CPU when taskset is there;',
    '                          "none": any; env BENCH_COLD_CPU)',
    '  -h, --help              this text',
    '',
    'Exit status: 0 when the run completed, even with targets missed (it is a report); 1 on a',
    'crash; 2 when --max-minutes ran out.',
  ].join('\n');
}

/** `taskset` (util-linux), which pins a process to one CPU; absent, the cold init runs unpinned. */
export const TASKSET = ['/usr/bin/taskset', '/bin/taskset'].find((path) => existsSync(path));

/**
 * The CPUs this process may run on (Linux's `Cpus_allowed_list`, as `0-1,4`), which a container
 * or `taskset` may have narrowed; elsewhere, 0 to the count Node reports.
 */
export function allowedCpus(status = readStatus()): number[] {
  const list = /^Cpus_allowed_list:\s*(\S+)/m.exec(status)?.[1];
  if (!list) return Array.from({ length: availableParallelism() }, (_, cpu) => cpu);
  return list.split(',').flatMap((range) => {
    const [from, to = from] = range.split('-').map(Number) as [number, number?];
    return Array.from({ length: to - from + 1 }, (_, i) => from + i);
  });
}

function readStatus(): string {
  try {
    return readFileSync('/proc/self/status', 'utf8');
  } catch {
    return '';
  }
}

function readColdCpu(raw: string | undefined): number | undefined {
  if (raw === 'none') return undefined;
  const cpus = allowedCpus();
  if (raw === undefined || raw === '') return TASKSET ? cpus.at(-1) : undefined;
  const cpu = Number(raw);
  if (!Number.isInteger(cpu) || !cpus.includes(cpu)) throw new OptionsError(`--cold-cpu (BENCH_COLD_CPU) must be one of the CPUs this process may use (${cpus.join(', ')}), or "none", got "${raw}"`);
  if (!TASKSET) throw new OptionsError('--cold-cpu needs taskset (util-linux), which is not on this machine; pass "none"');
  return cpu;
}

export class OptionsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OptionsError';
  }
}

export function parseOptions(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): BenchOptions | 'help' {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      ...Object.fromEntries(Object.values(NUMBERS).map((s) => [s.flag, { type: 'string' as const }])),
      sweep: { type: 'string' },
      out: { type: 'string' },
      quick: { type: 'boolean' },
      'rate-only': { type: 'boolean' },
      templates: { type: 'boolean' },
      scale: { type: 'boolean' },
      tracking: { type: 'boolean' },
      cold: { type: 'boolean' },
      node: { type: 'string' },
      'cold-cpu': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) return 'help';
  const quick = values.quick === true || env.BENCH_QUICK === '1';

  const number = (spec: Spec): number => {
    const raw = (values as Record<string, string | boolean | undefined>)[spec.flag] ?? env[spec.env];
    if (typeof raw === 'boolean') throw new OptionsError(`--${spec.flag} takes a number`);
    if (raw === undefined || raw.trim() === '') return quick && spec.quick !== undefined ? spec.quick : spec.fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < spec.min || n > spec.max) {
      throw new OptionsError(`--${spec.flag} (${spec.env}) must be a whole number from ${spec.min} to ${spec.max}, got "${raw}"`);
    }
    return n;
  };
  const numbers = Object.fromEntries(Object.entries(NUMBERS).map(([key, spec]) => [key, number(spec)])) as Record<keyof typeof NUMBERS, number>;

  const sweepRaw = (values.sweep as string | undefined) ?? env.BENCH_SWEEP ?? (quick ? 'none' : DEFAULT_SWEEP);
  const sweep =
    sweepRaw.trim() === 'none' || sweepRaw.trim() === ''
      ? []
      : sweepRaw.split(',').map((part) => {
          const n = Number(part.trim());
          if (!Number.isInteger(n) || n < 1 || n > 256) throw new OptionsError(`--sweep takes SEND_CONCURRENCY values from 1 to 256, got "${part}"`);
          return n;
        });
  if (sweep.length > 8) throw new OptionsError('--sweep takes at most 8 values');

  const coldNode = ((values.node as string | undefined) ?? env.BENCH_NODE)?.trim() || undefined;
  if (coldNode !== undefined && coldNode !== 'lambda' && !existsSync(coldNode)) {
    throw new OptionsError(`--node (BENCH_NODE) must name a node binary or "lambda", got "${coldNode}", which does not exist`);
  }

  const coldCpu = readColdCpu(((values['cold-cpu'] as string | undefined) ?? env.BENCH_COLD_CPU)?.trim());

  return { ...numbers, coldNode, coldCpu, sweep: [...new Set(sweep)], rateOnly: values['rate-only'] === true || env.BENCH_RATE_ONLY === '1', templatesOnly: values.templates === true || env.BENCH_TEMPLATES_ONLY === '1', scaleOnly: values.scale === true || env.BENCH_SCALE_ONLY === '1', trackingOnly: values.tracking === true || env.BENCH_TRACKING_ONLY === '1', coldOnly: values.cold === true || env.BENCH_COLD_ONLY === '1', out: (values.out as string | undefined) ?? env.BENCH_OUT ?? DEFAULT_OUT };
}
