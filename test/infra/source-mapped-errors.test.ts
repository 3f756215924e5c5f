import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { buildFunction, REPO_ROOT } from '../../infra/aws/send-bundle';
import { sourceMappedStack } from '../../functions/shared/runtime/source-mapped-errors';

/**
 * The functions run without `--enable-source-maps` (it costs every cold start); the logger maps
 * a logged error's stack instead. This builds a small function exactly as the stack builds one,
 * runs it in a fresh Node without that option, and reads the error record it logs.
 */
const OBSERVABILITY = join(REPO_ROOT, 'functions/shared/runtime/observability.ts');

// Line numbers matter below: the throw is on line 5, the cause made on line 4, the call on line 7.
const FIXTURE = `import { createLogger } from ${JSON.stringify(OBSERVABILITY)};
const logger = createLogger();
class FixtureFault extends Error { override name = 'FixtureFault'; readonly code = 'E_FIXTURE'; }
function cause(): Error { return new TypeError('the cause'); }
function fail(): never { throw new FixtureFault('the fixture failed', { cause: cause() }); }
export const handler = async () => {
  try { fail(); } catch (error) {
    logger.error('fixture fault', { error: error as Error });
    process.stdout.write(JSON.stringify({ callerStack: (error as Error).stack }) + '\\n');
  }
};
// Errors whose shape a copy would get wrong: a DOMException (getters on its prototype) as a
// cause, a name that is not enumerable, and a frozen error.
class QuietlyNamed extends Error {
  constructor(message: string) { super(message); Object.defineProperty(this, 'name', { value: 'QuietlyNamed' }); }
}
const made = (): Error => new Error('frozen');
export const odd = () => {
  logger.warn('timed out', { error: new Error('the provider did not answer', { cause: new DOMException('The operation timed out', 'TimeoutError') }) });
  logger.warn('quietly named', { error: new QuietlyNamed('a name that is not enumerable') });
  logger.warn('frozen', { error: Object.freeze(made()) });
};
`;

interface LoggedError {
  name: string;
  code: string;
  message: string;
  location: string;
  stack: string;
  cause: { name: string; stack: string };
}

describe('error stacks in the logs of a deployed function', () => {
  let dir: string;
  let fixtureUrl: string;
  let logged: LoggedError;
  let callerStack: string;
  let records: Record<string, unknown>[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'source-mapped-errors-'));
    const entry = join(dir, 'fixture.ts');
    fixtureUrl = pathToFileURL(entry).href;
    writeFileSync(entry, FIXTURE);
    await buildFunction(entry, join(dir, 'out'));
    const script = `const m = await import(${JSON.stringify(pathToFileURL(join(dir, 'out', 'index.mjs')).href)}); await m.handler(); m.odd();`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      // As Lambda runs it: no NODE_OPTIONS at all.
      env: { PATH: process.env.PATH, AWS_REGION: 'eu-west-1', AWS_LAMBDA_FUNCTION_NAME: 'fixture', POWERTOOLS_SERVICE_NAME: 'fixture' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    if (run.status !== 0) throw new Error(`the fixture failed to run: ${run.stderr}`);
    // The logger writes errors to stderr, the fixture its own line to stdout.
    records = `${run.stdout}${run.stderr}`.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    logged = records.find((line) => line.message === 'fixture fault')!.error as LoggedError;
    callerStack = records.find((line) => 'callerStack' in line)!.callerStack as string;
  }, 60_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('names the source lines of the throw and of its caller, not the bundle', () => {
    expect(logged.stack).toContain(`${fixtureUrl}:5:`);
    expect(logged.stack).toContain(`${fixtureUrl}:7:`);
    expect(logged.stack).not.toMatch(/\/out\/(chunks\/)?[\w-]+\.mjs:\d+:\d+/);
    expect(logged.location).toBe(`${fixtureUrl}:5`);
  });

  it("maps the cause's stack too", () => {
    expect(logged.cause.name).toBe('TypeError');
    expect(logged.cause.stack).toContain(`${fixtureUrl}:4:`);
  });

  it('keeps the fields of the error as the logger would write them', () => {
    expect(logged).toMatchObject({ name: 'FixtureFault', code: 'E_FIXTURE', message: 'the fixture failed' });
    expect(logged.stack.split('\n')[0]).toBe('FixtureFault: the fixture failed');
  });

  it('logs errors of every shape as the logger would, a DOMException cause, a hidden name and a frozen error among them', () => {
    const error = (message: string) => records.find((line) => line.message === message)?.error as LoggedError | undefined;
    expect(error('timed out')).toMatchObject({ name: 'Error', message: 'the provider did not answer', cause: { name: 'TimeoutError', message: 'The operation timed out' } });
    expect(error('timed out')!.stack).toContain(`${fixtureUrl}:`);
    expect(error('quietly named')).toMatchObject({ name: 'QuietlyNamed', message: 'a name that is not enumerable' });
    expect(error('frozen')).toMatchObject({ name: 'Error', message: 'frozen' });
    expect(error('frozen')!.stack.split('\n')[0]).toBe('Error: frozen');
  });

  it('leaves the error the caller holds as it was thrown', () => {
    expect(callerStack).toMatch(/\/out\/(chunks\/)?[\w-]+\.mjs:\d+:\d+/);
    expect(callerStack).not.toContain('fixture.ts');
  });
});

describe('sourceMappedStack', () => {
  it('leaves frames alone that are in no bundle file with a map beside it', () => {
    const stack = [
      'Error: no map',
      '    at f (file:///nonexistent/source-mapped-errors/chunk.mjs:1:10)',
      '    at g (/var/task/index.js:3:7)',
      '    at process.processTicksAndRejections (node:internal/process/task_queues:105:5)',
    ].join('\n');
    expect(sourceMappedStack(stack)).toBe(stack);
  });
});
