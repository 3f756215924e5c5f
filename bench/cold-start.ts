/**
 * Cold init: the send handler bundled exactly as the CDK stack bundles it (infra/aws/send-bundle.ts)
 * against a bundle that only imports the SES v2 client and constructs it, with the same esbuild
 * options. Each is imported in a fresh `node` process, in a Lambda-like environment and with the
 * Node options the stack gives the functions (none: no `--enable-source-maps`), and the import
 * (including the handler module's top-level await) is timed there.
 */
import { execFile } from 'node:child_process';
import { appendFile, cp, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { Metafile } from 'esbuild';
import { transform } from 'esbuild';
import { buildFunction, REPO_ROOT, SEND_ENTRY } from '../infra/aws/send-bundle';
import { startupOutputs } from '../infra/aws/startup-chunk';
import { TASKSET } from './options';
import { INFRA_DEFAULTS, powertoolsTraceEnabled } from '../infra/aws/settings';
import { median, round, summary } from './stats';

const run = promisify(execFile);

/**
 * The baselines, built exactly as the functions are: the SES-only bundle (the least any function
 * that sends through SES v2 must load) and the floor (the two SDK clients as the service builds
 * them, and Powertools Logger and Metrics: what the handler cannot do without, and nothing of its
 * own). The distance from SES-only to the floor is the design's; from the floor to the handler,
 * the service's own code and the libraries it runs on.
 */
const SES_ONLY_ENTRY = fileURLToPath(new URL('./baselines/ses-only/index.ts', import.meta.url));
const FLOOR_ENTRY = fileURLToPath(new URL('./baselines/floor/index.ts', import.meta.url));

/**
 * Runs in the fresh process: time from just before the import to just after it settles, and the
 * CPU time the process spent meanwhile (all its threads), which a busy machine moves far less.
 */
const PROBE = `
if (process.argv[2] === 'runtime-first') (await import('node:module')).createRequire(import.meta.url)('node:http');
const cpu = process.cpuUsage();
const started = performance.now();
const mod = await import(process.argv[1]);
const importMs = performance.now() - started;
const spent = process.cpuUsage(cpu);
if (typeof mod.handler !== 'function') throw new Error('no handler export');
process.stdout.write(JSON.stringify({ importMs, cpuMs: (spent.user + spent.system) / 1000, sinceProcessStartMs: performance.now() }) + '\\n');
`;

export interface Variant {
  readonly name: string;
  readonly bundle: 'handler' | 'floor' | 'sesOnly' | 'floorUnrun';
  readonly env: Readonly<Record<string, string>>;
  /** Node options the import runs with; the stack gives the functions none. */
  readonly nodeOptions?: readonly string[];
  /**
   * `node:http` required before the import, as in Lambda: the runtime interface client requires it
   * for its own client of the Runtime API before it loads the handler, so what it loads (`net`,
   * `stream` and the rest) is no longer the handler's to load, in either bundle.
   */
  readonly runtimeFirst?: boolean;
}

export interface ColdStartResult {
  readonly bundles: {
    /** `bytes`: read at start-up (the entry and the chunks it imports statically); `allBytes`: every chunk. */
    readonly handler: { readonly bytes: number; readonly allBytes: number; readonly mapBytes: number; readonly biggestInputs: readonly { readonly input: string; readonly bytes: number }[] };
    readonly floor: { readonly bytes: number; readonly allBytes: number; readonly mapBytes: number };
    readonly sesOnly: { readonly bytes: number; readonly allBytes: number; readonly mapBytes: number };
    /** The floor with the handler's start-up chunk appended as code that never runs (`unrunBytes` of it, beside the floor's `bytes`). */
    readonly floorUnrun: { readonly unrunBytes: number };
  };
  readonly variants: Record<string, { importMs: ReturnType<typeof summary>; cpuMs: ReturnType<typeof summary>; sinceProcessStartMs: ReturnType<typeof summary> }>;
  /** The Node.js the imports ran in (`node --version`). */
  readonly node: string;
  /** The one CPU the imports ran on, or undefined: any. */
  readonly cpu: number | undefined;
}

const startupBytes = (metafile: Metafile) => startupOutputs(metafile).reduce((sum, path) => sum + metafile.outputs[path]!.bytes, 0);
const allBytes = (metafile: Metafile) => Object.entries(metafile.outputs).reduce((sum, [path, { bytes }]) => sum + (path.endsWith('.map') ? 0 : bytes), 0);

/** Bytes read at start-up per package (or per source file of ours), biggest first. */
export function biggestInputs(metafile: Metafile, limit = 10): { input: string; bytes: number }[] {
  const byPackage = new Map<string, number>();
  for (const output of startupOutputs(metafile)) {
    for (const [path, { bytesInOutput }] of Object.entries(metafile.outputs[output]!.inputs)) {
      const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1] ?? path;
      byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + bytesInOutput);
    }
  }
  return [...byPackage]
    .map(([input, bytes]) => ({ input, bytes }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, limit);
}

/** The Lambda-like environment: only what the runtime and the stack would set, nothing of ours. */
export function lambdaEnv(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'bench',
    AWS_SECRET_ACCESS_KEY: 'bench',
    AWS_LAMBDA_FUNCTION_NAME: 'email-send-api-bench',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '1024',
    TABLE_NAME: 'email-send-api-bench',
    POWERTOOLS_SERVICE_NAME: 'email-send-api',
    // Lambda runs Node 24, where the SDK has nothing to warn about; on Node 20 the warning would cost both bundles alike.
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    ...extra,
  };
}

/**
 * What is imported and how: the handler as the stack deploys it by default (the tracer's setting
 * taken from the stack's own defaults), the same bundle with `traceSdkCalls` on (Powertools Tracer
 * and the X-Ray SDK at start-up), the same bundle with Node's `--enable-source-maps`, the floor
 * and the SES-only baseline.
 */
export function coldVariants(): Variant[] {
  return [
    { name: 'handler', bundle: 'handler', env: lambdaEnv({ POWERTOOLS_TRACE_ENABLED: String(powertoolsTraceEnabled(INFRA_DEFAULTS)) }) },
    { name: 'handlerSdkTraced', bundle: 'handler', env: lambdaEnv({ POWERTOOLS_TRACE_ENABLED: 'true' }) },
    // What Node's own source maps cost a cold start: the stack set them until the logger mapped stacks itself.
    { name: 'handlerSourceMaps', bundle: 'handler', env: lambdaEnv({ POWERTOOLS_TRACE_ENABLED: String(powertoolsTraceEnabled(INFRA_DEFAULTS)) }), nodeOptions: ['--enable-source-maps'] },
    { name: 'floor', bundle: 'floor', env: lambdaEnv() },
    // What code costs a cold start that is read but never run: how much deferring it could save.
    { name: 'floorUnrun', bundle: 'floorUnrun', env: lambdaEnv() },
    { name: 'sesOnly', bundle: 'sesOnly', env: lambdaEnv() },
    // As Lambda's runtime loads them: after it has required node:http for itself.
    { name: 'handlerRuntimeFirst', bundle: 'handler', env: lambdaEnv({ POWERTOOLS_TRACE_ENABLED: String(powertoolsTraceEnabled(INFRA_DEFAULTS)) }), runtimeFirst: true },
    { name: 'sesOnlyRuntimeFirst', bundle: 'sesOnly', env: lambdaEnv(), runtimeFirst: true },
  ];
}

/** The one chunk a build's entry imports (infra/aws/startup-chunk.ts), as an absolute path. */
function startupChunk(metafile: Metafile): string {
  const chunks = startupOutputs(metafile).filter((path) => !path.endsWith('index.mjs'));
  if (chunks.length !== 1) throw new Error(`expected one start-up chunk, found ${chunks.length}`);
  return resolve(REPO_ROOT, chunks[0]!);
}

/**
 * Copies the floor's build to `outdir` and appends to its start-up chunk the handler's start-up
 * chunk, all of it, inside a function that nothing calls: V8 then reads and pre-parses that code
 * at every import of the copy, and compiles or runs none of it. Against the floor, that is what
 * code costs a cold start for being read, so what loading it on first use could save. The chunk
 * is an ES module; esbuild rewrites its imports and exports as CommonJS, which a function body
 * may hold, minified as it was. Returns how many bytes were appended.
 */
async function appendUnrunCode(floorDir: string, floorMetafile: Metafile, outdir: string, handlerMetafile: Metafile): Promise<number> {
  await cp(floorDir, outdir, { recursive: true });
  const { code } = await transform(await readFile(startupChunk(handlerMetafile), 'utf8'), { format: 'cjs', minify: true, logLevel: 'silent' });
  const unrun = `\nfunction __neverCalled(){${code}}\n`;
  await appendFile(join(outdir, relative(floorDir, startupChunk(floorMetafile))), unrun);
  return Buffer.byteLength(unrun);
}

export async function measureColdStart(options: {
  readonly runs: number;
  readonly variants: readonly Variant[];
  readonly progress: (line: string) => void;
  /** The node binary to import in (default: this process's). */
  readonly node?: string | undefined;
  /**
   * The one CPU every import runs on (with taskset), or undefined: any. A Lambda function of
   * 1,024 MB gets about 0.6 of a vCPU, all its threads together, so V8's compiler and garbage
   * collector threads cannot run beside the import on a second core there; pinned, they cannot
   * here either, and the figures no longer move with what else the machine's cores are doing.
   */
  readonly cpu?: number | undefined;
}): Promise<ColdStartResult> {
  const node = options.node ?? process.execPath;
  const { cpu } = options;
  if (cpu !== undefined && !TASKSET) throw new Error('pinning the cold init imports to one CPU needs taskset (util-linux), which is not on this machine');
  const pinned = (args: string[]): [string, string[]] => (cpu === undefined || !TASKSET ? [node, args] : [TASKSET, ['-c', String(cpu), node, ...args]]);
  const nodeVersion = (await run(node, ['--version'])).stdout.trim();
  const dir = await mkdtemp(join(tmpdir(), 'email-send-api-bench-'));
  try {
    const handlerFile = join(dir, 'handler', 'index.mjs');
    const sesOnlyFile = join(dir, 'ses-only', 'index.mjs');
    const floorFile = join(dir, 'floor', 'index.mjs');
    // Each bundle as the stack builds the send function: split, with what a cold start reads in
    // the entry and one chunk (infra/aws/send-bundle.ts).
    const handlerBuild = await buildFunction(SEND_ENTRY, join(dir, 'handler'));
    const sesOnlyBuild = await buildFunction(SES_ONLY_ENTRY, join(dir, 'ses-only'));
    const floorBuild = await buildFunction(FLOOR_ENTRY, join(dir, 'floor'));
    const unrunBytes = await appendUnrunCode(join(dir, 'floor'), floorBuild.metafile, join(dir, 'floor-unrun'), handlerBuild.metafile);
    const size = async (file: string) => (await stat(file)).size;
    const bundles = {
      handler: {
        bytes: startupBytes(handlerBuild.metafile),
        allBytes: allBytes(handlerBuild.metafile),
        mapBytes: await size(`${handlerFile}.map`),
        biggestInputs: biggestInputs(handlerBuild.metafile),
      },
      floor: { bytes: startupBytes(floorBuild.metafile), allBytes: allBytes(floorBuild.metafile), mapBytes: await size(`${floorFile}.map`) },
      sesOnly: { bytes: startupBytes(sesOnlyBuild.metafile), allBytes: allBytes(sesOnlyBuild.metafile), mapBytes: await size(`${sesOnlyFile}.map`) },
      floorUnrun: { unrunBytes },
    };
    options.progress(`bundles (read at start-up / all chunks): handler ${kib(bundles.handler.bytes)} / ${kib(bundles.handler.allBytes)}, floor ${kib(bundles.floor.bytes)}, SES-only ${kib(bundles.sesOnly.bytes)}; biggest inputs of the handler: ${bundles.handler.biggestInputs.slice(0, 5).map((i) => `${i.input} ${kib(i.bytes)}`).join(', ')}`);

    const files = {
      handler: pathToFileURL(handlerFile).href,
      floor: pathToFileURL(floorFile).href,
      sesOnly: pathToFileURL(sesOnlyFile).href,
      floorUnrun: pathToFileURL(join(dir, 'floor-unrun', 'index.mjs')).href,
    };
    const samples = Object.fromEntries(options.variants.map((v) => [v.name, { importMs: [] as number[], cpuMs: [] as number[], sinceProcessStartMs: [] as number[] }]));
    // One warm-up each (file system cache), then the variants take turns so drift hits all alike.
    for (let round = -1; round < options.runs; round++) {
      for (const variant of options.variants) {
        const { stdout } = await run(...pinned([...(variant.nodeOptions ?? []), '--input-type=module', '-e', PROBE, files[variant.bundle], ...(variant.runtimeFirst ? ['runtime-first'] : [])]), {
          env: variant.env,
          timeout: 30_000,
          maxBuffer: 1024 * 1024,
        });
        const line = stdout.split('\n').find((l) => l.startsWith('{"importMs"'));
        if (!line) throw new Error(`the ${variant.name} probe printed no timing: ${stdout.slice(0, 500)}`);
        const figures = JSON.parse(line) as { importMs: number; cpuMs: number; sinceProcessStartMs: number };
        if (round < 0) continue;
        samples[variant.name]!.importMs.push(figures.importMs);
        samples[variant.name]!.cpuMs.push(figures.cpuMs);
        samples[variant.name]!.sinceProcessStartMs.push(figures.sinceProcessStartMs);
      }
    }
    const variants = Object.fromEntries(
      Object.entries(samples).map(([name, s]) => [name, { importMs: summary(s.importMs), cpuMs: summary(s.cpuMs), sinceProcessStartMs: summary(s.sinceProcessStartMs) }]),
    );
    const on = options.cpu === undefined ? 'any CPU' : `CPU ${options.cpu} only`;
    for (const [name, s] of Object.entries(samples)) options.progress(`cold init ${name} (Node ${nodeVersion}, ${on}): import median ${round(median(s.importMs))} ms, CPU ${round(median(s.cpuMs))} ms`);
    return { bundles, variants, node: nodeVersion, cpu: options.cpu };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export const kib = (bytes: number) => `${round(bytes / 1024, 0)} KiB`;
