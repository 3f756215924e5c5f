/**
 * `npm run bench`: how much the service adds on top of Amazon SES, measured against baselines
 * taken in the same run (these machines are shared and noisy, so only ratios are compared).
 * Everything runs on 127.0.0.1: the emulators and the local stack in child processes, the
 * measuring clients here. See `npm run bench -- --help`, and docs/performance.md.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDynamoDbClient } from '../functions/shared/runtime/clients';
import { DEFAULTS } from '../functions/shared/runtime/config';
import { DynamoDbAdminStore } from '../infra/admin/admin-store';
import type { Child } from './child';
import { forkChild } from './child';
import { coldVariants, measureColdStart } from './cold-start';
import { lambdaNode } from './lambda-node';
import type { EmulatorsInfo } from './emulators-child';
import type { BenchOptions } from './options';
import { OptionsError, helpText, parseOptions } from './options';
import type { BenchContext } from './phases';
import { measureBatch, measureLoad, measureRoundTrips, measureSingle, measureSweep } from './phases';
import type { BenchResults } from './report';
import { checkTargets, renderColdRows, renderSweep, renderTable, renderTargets } from './report';
import type { StackInfo } from './stack-child';
import type { RateScenario } from './rate';
import { measureRate, rateTargetsMet, renderRate } from './rate';
import type { FairnessScenario } from './fairness';
import { fairnessTargetsMet, measureFairness, renderFairness } from './fairness';
import { apiClient, directSes } from './traffic';
import { round } from './stats';
import { measureTemplates, renderTemplates } from './templates';
import { measureScale, renderScale } from './scale';
import type { TrackingBench } from './tracking';
import { measureTracking, renderTracking } from './tracking';

const REGION = 'us-east-1';
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

const progress = (line: string) => process.stderr.write(`[bench] ${line}\n`);

function prepareEnvironment(): void {
  // Every endpoint is on this machine: placeholder credentials, never a developer's own profile.
  process.env.AWS_ACCESS_KEY_ID = 'local';
  process.env.AWS_SECRET_ACCESS_KEY = 'local';
  delete process.env.AWS_SESSION_TOKEN;
  delete process.env.AWS_PROFILE;
  process.env.AWS_REGION = REGION;
  // Lambda runs Node 24; the SDK's warning about Node 20 would only add noise to the logs.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
}

/** The rate-limited scenarios and the fairness ones, as tables and their targets. */
function rateReport(rows: readonly RateScenario[], fairness: readonly FairnessScenario[]): string {
  const targets = [...rateTargetsMet(rows), ...fairnessTargetsMet(fairness)];
  return [
    'Sending at the account rate (SES enforcing it, rate learnt from GetAccount):',
    '',
    renderRate(rows),
    '',
    'Sharing it between Organizations:',
    '',
    renderFairness(fairness),
    '',
    ...targets.map((t) => `${t.pass ? 'PASS' : 'MISS'}  ${t.description}: ${t.value}`),
  ].join('\n');
}

async function runRateOnly(options: BenchOptions): Promise<void> {
  prepareEnvironment();
  const rows = await measureRate(progress);
  const fairness = await measureFairness(progress);
  const outFile = resolve(options.out);
  await mkdir(dirname(outFile), { recursive: true });
  const targets = [...rateTargetsMet(rows), ...fairnessTargetsMet(fairness)];
  await writeFile(outFile, `${JSON.stringify({ schema: 'email-send-api/bench-rate/2', at: new Date().toISOString(), rate: rows, fairness, targets }, null, 2)}\n`);
  process.stdout.write(`\n${rateReport(rows, fairness)}\n\nFigures written to ${relative(process.cwd(), outFile)}\n`);
}

async function runTemplatesOnly(options: BenchOptions): Promise<void> {
  prepareEnvironment();
  const result = await measureTemplates({ runs: options.batchRuns, messages: options.batchSize }, progress);
  const outFile = resolve(options.out);
  await mkdir(dirname(outFile), { recursive: true });
  await writeFile(outFile, `${JSON.stringify({ schema: 'email-send-api/bench-templates/1', at: new Date().toISOString(), templates: result }, null, 2)}\n`);
  process.stdout.write(`\n${renderTemplates(result)}\n\nFigures written to ${relative(process.cwd(), outFile)}\n`);
}

async function runScaleOnly(options: BenchOptions): Promise<void> {
  prepareEnvironment();
  const outFile = resolve(options.out);
  const logDir = join(dirname(outFile), 'logs');
  await mkdir(logDir, { recursive: true });
  const result = await measureScale({ organizations: 50, connections: options.connections, durationSeconds: options.durationSeconds, latencyMs: options.latencyMs, logDir }, progress);
  const load = loadavg().map((n) => round(n, 2)).join(' ');
  await writeFile(outFile, `${JSON.stringify({ schema: 'email-send-api/bench-scale/1', at: new Date().toISOString(), loadAverage: load, scale: result }, null, 2)}\n`);
  process.stdout.write(`\n${renderScale(result)}\n\n${availableParallelism()} CPUs · load average ${load}\nFigures written to ${relative(process.cwd(), outFile)}\n`);
}

async function runTrackingOnly(options: BenchOptions): Promise<void> {
  prepareEnvironment();
  const result = await measureTracking({ runs: options.runs * 5 }, progress);
  const outFile = resolve(options.out);
  await mkdir(dirname(outFile), { recursive: true });
  const load = loadavg().map((n) => round(n, 2)).join(' ');
  await writeFile(outFile, `${JSON.stringify({ schema: 'email-send-api/bench-tracking/1', at: new Date().toISOString(), loadAverage: load, tracking: result }, null, 2)}\n`);
  process.stdout.write(`\n${renderTracking(result)}\n\n${availableParallelism()} CPUs · load average ${load}\nFigures written to ${relative(process.cwd(), outFile)}\n`);
}

/** Only the cold init rows (d), to measure a change to the bundle in a minute. */
async function runColdOnly(options: BenchOptions): Promise<void> {
  const coldStart = await measureColdStart({ runs: options.coldRuns, progress, variants: coldVariants(), node: options.coldNode, cpu: options.coldCpu });
  const load = loadavg().map((n) => round(n, 2)).join(' ');
  const outFile = resolve(options.out);
  await mkdir(dirname(outFile), { recursive: true });
  await writeFile(outFile, `${JSON.stringify({ schema: 'email-send-api/bench-cold/1', at: new Date().toISOString(), loadAverage: load, coldStart }, null, 2)}\n`);
  process.stdout.write(`\n${renderColdRows(coldStart)}\n\nNode ${coldStart.node} · ${availableParallelism()} CPUs, the imports on ${coldStart.cpu === undefined ? 'any' : `CPU ${coldStart.cpu} only`} · load average ${load}\nFigures written to ${relative(process.cwd(), outFile)}\n`);
}

async function run(options: BenchOptions): Promise<void> {
  if (options.coldOnly) return runColdOnly(options);
  if (options.rateOnly) return runRateOnly(options);
  if (options.trackingOnly) return runTrackingOnly(options);
  if (options.templatesOnly) return runTemplatesOnly(options);
  if (options.scaleOnly) return runScaleOnly(options);
  const started = new Date();
  const outFile = resolve(options.out);
  const logDir = join(dirname(outFile), 'logs');
  await mkdir(logDir, { recursive: true });
  prepareEnvironment();

  const children: Child<unknown>[] = [];
  const stopChildren = async () => {
    for (const child of children.splice(0).reverse()) await child.stop().catch(() => undefined);
  };
  const watchdog = setTimeout(() => {
    progress(`aborted: the run took longer than --max-minutes ${options.maxMinutes}`);
    void stopChildren().finally(() => process.exit(2));
  }, options.maxMinutes * 60_000);
  watchdog.unref();
  const interrupt = () => {
    progress('interrupted');
    void stopChildren().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);

  let context: BenchContext | undefined;
  let measured: Omit<BenchResults, 'coldStart'>;
  try {
    progress(`starting dynalite and the SES emulator, SES behind a ${options.latencyMs} ms latency proxy (logs in ${relative(process.cwd(), logDir)}/)…`);
    const emulators = await forkChild<EmulatorsInfo>(here('./emulators-child.ts'), {
      env: { BENCH_CHILD_LATENCY_MS: String(options.latencyMs) },
      logFile: join(logDir, 'emulators.log'),
    });
    children.push(emulators);
    progress(`starting the local stack (SEND_CONCURRENCY ${options.concurrency}, AUTH_CACHE_SECONDS ${DEFAULTS.authCacheSeconds})…`);
    const stack = await forkChild<StackInfo>(here('./stack-child.ts'), {
      env: {
        // As in Lambda: the handler's metrics are written (to the log file), so their cost is measured.
        POWERTOOLS_METRICS_DISABLED: 'false',
        BENCH_CHILD_DYNAMODB_ENDPOINT: emulators.info.dynamodbCounted,
        BENCH_CHILD_SES_ENDPOINT: emulators.info.sesDelayed,
        BENCH_CHILD_SERVICE_ENV: JSON.stringify({
          AUTH_CACHE_SECONDS: String(DEFAULTS.authCacheSeconds),
          SEND_CONCURRENCY: String(options.concurrency),
        }),
      },
      logFile: join(logDir, 'stack.log'),
    });
    children.push(stack);
    progress(`local stack at ${stack.info.sendUrl}`);

    const documents = createDynamoDbClient({ region: REGION, dynamodbEndpoint: emulators.info.dynamodbDirect });
    context = {
      emulators,
      stack,
      tenant: {
        apiKey: stack.info.apiKey,
        organizationId: stack.info.organizationId,
        senderDomain: stack.info.senderDomain,
        ...(options.attachmentBytes > 0 && { attachment: Buffer.alloc(options.attachmentBytes, 0x25) }),
      },
      api: apiClient(stack.info.sendUrl),
      direct: directSes(emulators.info.sesDelayed, REGION),
      admin: new DynamoDbAdminStore(documents, stack.info.tableName),
      progress,
    };

    progress(`counting DynamoDB requests per API request on ${options.missSamples} fresh keys…`);
    const roundTrips = await measureRoundTrips(context, options.missSamples);
    progress(`one message: ${options.runs} runs each of the API and of a direct SendEmail…`);
    const single = await measureSingle(context, options.runs);
    progress(`${options.batchSize} messages: ${options.batchRuns} runs each, ${options.sequentialRuns} sequential…`);
    const batch = await measureBatch(context, {
      runs: options.batchRuns,
      size: options.batchSize,
      concurrency: options.concurrency,
      sequentialRuns: options.sequentialRuns,
    });
    const load = await measureLoad(context, { connections: options.connections, durationSeconds: options.durationSeconds });
    if (options.sweep.length > 0) progress(`SEND_CONCURRENCY sweep over ${options.sweep.join(', ')}…`);
    const sweep = await measureSweep(context, { values: options.sweep, runs: Math.min(options.batchRuns, 7), size: options.batchSize });
    measured = { latencyMs: options.latencyMs, roundTrips, single, batch, load, sweep };
    documents.destroy();
  } finally {
    context?.api.close();
    context?.direct.close();
    await stopChildren();
  }

  progress('sending at the account rate: four scenarios with SES enforcing a send rate…');
  const rate = await measureRate(progress);
  progress('sharing the account rate between Organizations: four scenarios…');
  const fairness = await measureFairness(progress);
  progress('open and click tracking: rewriting a tracked 100 KB message, and untracked sends with and without the tracker…');
  const tracking = await measureTracking({ runs: options.runs * 5 }, progress);

  // Last, with the emulators gone: fresh processes are the most sensitive to a busy machine.
  progress(`cold init: bundling and importing each bundle in ${options.coldRuns} fresh node processes…`);
  const coldStart = await measureColdStart({ runs: options.coldRuns, progress, variants: coldVariants(), node: options.coldNode, cpu: options.coldCpu });
  clearTimeout(watchdog);

  const results: BenchResults & { rate: RateScenario[]; fairness: FairnessScenario[]; tracking: TrackingBench } = { ...measured, coldStart, rate, fairness, tracking };
  const targets = checkTargets(results);
  const finished = new Date();
  const environment = {
    node: process.version,
    coldInitNode: coldStart.node,
    coldInitCpu: coldStart.cpu ?? 'any',
    platform: `${process.platform} ${process.arch}`,
    cpus: availableParallelism(),
    cpuModel: cpus()[0]?.model,
    loadAverageAtEnd: loadavg().map((n) => Math.round(n * 100) / 100),
  };
  const report = {
    schema: 'email-send-api/bench/1',
    startedAt: started.toISOString(),
    finishedAt: finished.toISOString(),
    durationSeconds: Math.round((finished.getTime() - started.getTime()) / 100) / 10,
    environment,
    options,
    results,
    targets,
  };
  await mkdir(dirname(outFile), { recursive: true });
  const json = `${JSON.stringify(report, null, 2)}\n`;
  const stamped = join(dirname(outFile), `bench-${started.toISOString().replace(/[:.]/g, '-')}.json`);
  await writeFile(outFile, json);
  await writeFile(stamped, json);

  const out = [
    '',
    `SES latency ${options.latencyMs} ms · SEND_CONCURRENCY ${options.concurrency} · AUTH_CACHE_SECONDS ${DEFAULTS.authCacheSeconds} · Node ${process.version} · ${environment.cpus} CPUs · load average ${environment.loadAverageAtEnd.join(' ')} · ${report.durationSeconds} s`,
    '',
    renderTable(results, targets),
    '',
  ];
  const sweepTable = renderSweep(results);
  if (sweepTable) out.push(`SEND_CONCURRENCY sweep (${options.batchSize} messages, median of ${results.sweep[0]?.api.n ?? 0}):`, '', sweepTable, '');
  out.push(rateReport(rate, fairness), '');
  out.push(renderTracking(tracking), '');
  out.push(renderTargets(targets), '', `Figures written to ${relative(process.cwd(), outFile)} (and ${relative(process.cwd(), stamped)})`);
  process.stdout.write(`${out.join('\n')}\n`);
}

async function main(): Promise<number> {
  let options: BenchOptions | 'help';
  try {
    options = parseOptions(process.argv.slice(2), process.env);
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n\n${helpText()}\n`);
    return error instanceof OptionsError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') ? 64 : 1;
  }
  if (options === 'help') {
    process.stdout.write(`${helpText()}\n`);
    return 0;
  }
  try {
    // `--node lambda` is found (and fetched, the first time) before anything is measured.
    if (options.coldNode === 'lambda') options = { ...options, coldNode: await lambdaNode(progress) };
    await run(options);
    return 0;
  } catch (error) {
    process.stderr.write(`[bench] failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return 1;
  }
}

process.exit(await main());
