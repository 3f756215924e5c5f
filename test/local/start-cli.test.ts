/**
 * `npm start` and `npm run admin` as processes: what a newcomer sees and pastes. Slow-ish (each
 * spawn compiles TypeScript), so only what the in-process suites cannot show is here.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from '@jest/globals';
import { clearEmails, closePort, freePort, occupyPort, sentEmails } from './helpers';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// The binary that `npm start` and `npx tsx` both run. Spawning it directly lets the test signal
// the stack's own process and see its exit code; npx would not pass a lone SIGINT on.
const TSX = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));
const run = promisify(execFile);

interface Started {
  readonly child: ChildProcess;
  readonly output: () => { stdout: string; stderr: string };
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const children: ChildProcess[] = [];
const groups: number[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  // A process group started here: whatever is left of it, e.g. a stack that outlived npm.
  for (const group of groups.splice(0)) {
    try {
      process.kill(-group, 'SIGKILL');
    } catch {
      // none left
    }
  }
});

/**
 * `ownGroup`: in a process group of its own, as a terminal runs a command (npm and all it starts).
 * Every stack is started so: tsx runs the script in a child process of its own, which a SIGKILL
 * of tsx after a failed test would leave running; the group's is not.
 */
function startProcess(command: string, args: string[], env: Record<string, string>, ownGroup = false): Started {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '', TABLE_NAME: '', LOCAL_DATA: 'memory', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: ownGroup,
  });
  children.push(child);
  if (ownGroup && child.pid !== undefined) groups.push(child.pid);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  child.stderr!.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, output: () => ({ stdout, stderr }), exited };
}

/** Polls until `condition` holds; fails at once, with the process's output, if it has exited. */
async function waitUntil(started: Started, what: string, condition: () => Promise<boolean>, timeoutMs = 40_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition().catch(() => false))) {
    const { child } = started;
    const gone = child.exitCode !== null || child.signalCode !== null;
    if (gone || Date.now() > deadline) {
      const { stdout, stderr } = started.output();
      throw new Error(`${gone ? 'the process exited' : 'timed out'} waiting for ${what}\nstdout:\n${stdout}\nstderr:\n${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Free ports for a stack, and the environment that gives them to it. */
async function stackPorts(): Promise<{ ports: Record<'PORT' | 'DYNAMODB_PORT' | 'SES_PORT' | 'OIDC_PORT', number>; env: Record<string, string> }> {
  const ports = { PORT: await freePort(), DYNAMODB_PORT: await freePort(), SES_PORT: await freePort(), OIDC_PORT: await freePort() };
  return { ports, env: Object.fromEntries(Object.entries(ports).map(([name, port]) => [name, String(port)])) };
}

/** Each port can be bound again: nothing of the stack holds it any more. */
async function expectPortsFree(ports: Record<string, number>): Promise<void> {
  for (const port of Object.values(ports)) await closePort(await occupyPort(port));
}

/** The printed curl command: from its first line to the first line without a continuation. */
function printedCurl(stdout: string): string {
  const lines = stdout.split('\n');
  const start = lines.findIndex((line) => line.startsWith('curl '));
  expect(start).toBeGreaterThanOrEqual(0);
  let end = start;
  while (lines[end]!.endsWith('\\')) end++;
  return lines.slice(start, end + 1).join('\n');
}

/** The printed `export` lines, as a person would copy them. */
const printedExports = (stdout: string): string => stdout.split('\n').filter((line) => line.startsWith('export ')).join('\n');

/** What runs in "another shell": a clean environment holding only PATH, and what the pasted lines set. */
const anotherShell = (script: string, cwd = ROOT) => run('sh', ['-c', script], { cwd, timeout: 10_000, env: { PATH: process.env.PATH! } });

describe('npm start (infra/local/start.ts as a process)', () => {
  it('prints a working curl, serves until SIGINT, then stops cleanly with exit code 0', async () => {
    const ports = { PORT: await freePort(), DYNAMODB_PORT: await freePort(), SES_PORT: await freePort(), OIDC_PORT: await freePort() };
    const env = Object.fromEntries(Object.entries(ports).map(([name, port]) => [name, String(port)]));
    const stack = startProcess(TSX, ['infra/local/start.ts'], env, true);
    const apiUrl = `http://127.0.0.1:${ports.PORT}`;
    const sesUrl = `http://127.0.0.1:${ports.SES_PORT}`;

    await waitUntil(stack, 'GET / to answer 200', async () => (await fetch(`${apiUrl}/`)).status === 200);
    await waitUntil(stack, 'the banner', async () => stack.output().stdout.includes('Press Ctrl-C to stop.'));
    const { stdout } = stack.output();
    expect(stdout).toContain(`POST ${apiUrl}/v1.2/email/send`);
    expect(stdout).toContain(`Mail viewer  ${sesUrl}/`);
    expect(stdout).toContain(`Settings     ${apiUrl}/settings`);
    const settings = await fetch(`${apiUrl}/settings`);
    expect([settings.status, settings.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
    expect(await settings.text()).toContain('<title>Settings');
    // HEAD, as link checkers send it: the same answer, Content-Length included, without the body.
    for (const path of ['/settings', '/problems/validation']) {
      const [got, head] = [await fetch(`${apiUrl}${path}`), await fetch(`${apiUrl}${path}`, { method: 'HEAD' })];
      const length = String(Buffer.byteLength(await got.text()));
      expect([path, head.status, head.headers.get('content-type'), head.headers.get('content-length'), await head.text()]).toEqual([path, 200, 'text/html; charset=utf-8', length, '']);
    }

    const exports = printedExports(stdout);
    expect(exports).toMatch(new RegExp(`^export BASE_URL=${apiUrl}\nexport API_KEY=tme_[0-9A-Za-z]+\nexport ORGANIZATION_ID=[0-9a-f-]{36}$`));
    const key = /API_KEY=(tme_[0-9A-Za-z]+)/.exec(exports)![1]!;
    expect(stdout.split(key).length - 1).toBe(1); // the key is printed once, in its export line

    await clearEmails(sesUrl);
    const { stdout: response } = await anotherShell(`${exports}\n${printedCurl(stdout)}`);
    expect(JSON.parse(response)).toMatchObject({ Messages: [{ Status: 'Sent' }] });
    expect(await sentEmails(sesUrl)).toEqual([expect.objectContaining({ subject: 'Hello from the local stack' })]);

    // The admin command line as documented, against this stack: stdout is exactly one JSON object.
    const created = await run('npm', ['run', '--silent', 'admin', '--', 'org', 'create', '--name', 'Spawned', '--json'], {
      cwd: ROOT,
      env: { ...process.env, DYNAMODB_PORT: env.DYNAMODB_PORT!, DYNAMODB_ENDPOINT: '', TABLE_NAME: '' },
      timeout: 20_000,
    });
    expect(created.stdout).toMatch(/^\{"id":"[0-9a-f-]{36}"\}\n$/);

    stack.child.kill('SIGINT');
    expect(await stack.exited).toEqual({ code: 0, signal: null });
    const final = stack.output();
    expect(final.stdout).toMatch(/SIGINT: stopping…\nStopped\.\n$/);
    expect(final.stderr).not.toMatch(/Error|tme_/);
    await expect(fetch(`${apiUrl}/`)).rejects.toThrow();
  }, 60_000);

  it('through npm start: SIGTERM to the npm process reaches the stack, which stops cleanly; exit code 0, ports free', async () => {
    const { ports, env } = await stackPorts();
    const stack = startProcess('npm', ['start'], env, true);
    const apiUrl = `http://127.0.0.1:${ports.PORT}`;
    await waitUntil(stack, 'GET / to answer 200', async () => (await fetch(`${apiUrl}/`)).status === 200);

    stack.child.kill('SIGTERM'); // npm's own process only, as `kill <pid>` or a process manager would
    expect(await stack.exited).toEqual({ code: 0, signal: null });
    const final = stack.output();
    expect(final.stdout).toMatch(/SIGTERM: stopping…\nStopped\.\n$/);
    expect(final.stderr.split('\n').filter((line) => line && !line.startsWith('npm warn'))).toEqual([]);
    await expect(fetch(`${apiUrl}/`)).rejects.toThrow();
    await expectPortsFree(ports);
  }, 60_000);

  it('through npm start: Ctrl-C (SIGINT to the whole process group, which npm forwards too) stops it once, cleanly; exit code 0', async () => {
    const { ports, env } = await stackPorts();
    const stack = startProcess('npm', ['start'], env, true);
    await waitUntil(stack, 'GET / to answer 200', async () => (await fetch(`http://127.0.0.1:${ports.PORT}/`)).status === 200);

    process.kill(-stack.child.pid!, 'SIGINT'); // what the terminal does on Ctrl-C
    expect(await stack.exited).toEqual({ code: 0, signal: null });
    const { stdout } = stack.output();
    expect(stdout).toMatch(/SIGINT: stopping…\nStopped\.\n$/);
    expect(stdout).not.toContain('again');
    await expectPortsFree(ports);
  }, 60_000);

  it.each([
    ['in memory', 'memory'],
    ['with data on disk', 'disk'],
  ])("the README's quick start as written, %s on other ports: npm install, npm start, its export lines and the README's curl send", async (_label, data) => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const heading = '## Send a first message';
    const quickStart = readme.slice(readme.indexOf(heading), readme.indexOf('\n## ', readme.indexOf(heading) + 1));
    const blocks = [...quickStart.matchAll(/```sh\n([\s\S]*?)```/g)].map(([, body]) => body!);
    expect(blocks).toHaveLength(2);
    expect(blocks[0]!.split('\n').map((line) => line.replace(/\s+#.*$/, ''))).toEqual(['npm install', 'npm start', '']);
    const curl = blocks[1]!.split('\n').filter((line) => line && !line.startsWith('#')).join('\n');
    expect(curl).toMatch(/^curl .*"\$BASE_URL\/v1\.2\/email\/send"/);

    const home = await mkdtemp(join(tmpdir(), 'readme-'));
    try {
      // No port is the default, so nothing but the export lines can tell the curl where to go.
      const { ports, env } = await stackPorts();
      const stack = startProcess(TSX, ['infra/local/start.ts'], { ...env, LOCAL_DATA: data, LOCAL_DATA_DIR: join(home, '.local') }, true);
      await waitUntil(stack, 'the banner', async () => stack.output().stdout.includes('Press Ctrl-C to stop.'));
      const { stdout } = stack.output();
      // What the README shows is what npm start prints, word for word.
      expect(printedCurl(stdout)).toBe(curl);
      const sesUrl = `http://127.0.0.1:${ports.SES_PORT}`;
      await clearEmails(sesUrl);

      const { stdout: answer } = await anotherShell(`${printedExports(stdout)}\n${curl}`, home);
      expect(JSON.parse(answer)).toMatchObject({ Messages: [{ Index: 0, Status: 'Sent', MessageId: expect.stringMatching(/^ses-/) }] });
      expect(await sentEmails(sesUrl)).toEqual([expect.objectContaining({ subject: 'Hello from the local stack' })]);

      // Only stopped here: a clean stop on SIGINT is the first test's (through tsx, whose signal
      // relay can answer 130 on a loaded machine before the stack's own handler is known to it).
      stack.child.kill('SIGINT');
      await stack.exited;
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  }, 60_000);

  it('exits non-zero with one line naming the taken port and its variable (through npx tsx)', async () => {
    const taken = await occupyPort(0);
    const port = (taken.address() as { port: number }).port;
    try {
      const stack = startProcess('npx', ['tsx', 'infra/local/start.ts'], {
        PORT: String(await freePort()),
        DYNAMODB_PORT: String(port),
        SES_PORT: String(await freePort()),
      });
      const { code } = await stack.exited;
      expect(code).toBe(1);
      const { stderr } = stack.output();
      const lines = stderr.split('\n').filter((line) => line && !line.startsWith('npm warn'));
      expect(lines).toEqual([`Port ${port} (DYNAMODB_PORT) is already in use: stop what is using it or set DYNAMODB_PORT to another port, e.g. DYNAMODB_PORT=${port + 1}.`]);
    } finally {
      await closePort(taken);
    }
  }, 60_000);
});

describe('output to a reader that stopped early', () => {
  it('npm start goes on serving, and stops cleanly at Ctrl-C, when its output pipe is closed (`npm start | head -5`)', async () => {
    const { ports, env } = await stackPorts();
    const stack = startProcess(TSX, ['infra/local/start.ts'], env, true);
    stack.child.stdout!.destroy();
    await waitUntil(stack, 'GET / to answer 200', async () => (await fetch(`http://127.0.0.1:${ports.PORT}/`)).status === 200);
    stack.child.kill('SIGINT');
    expect(await stack.exited).toEqual({ code: 0, signal: null });
    expect(stack.output().stderr).not.toMatch(/EPIPE/);
  }, 60_000);

  it('npm run admin stops quietly with exit code 0 (`--help | head -1`)', async () => {
    const cli = startProcess(TSX, ['infra/admin/admin.ts', '--help'], {});
    // The reader is gone before the help is written, as `head -1` is once it has its line.
    cli.child.stdout!.destroy();
    expect(await cli.exited).toEqual({ code: 0, signal: null });
    expect(cli.output().stderr).toBe('');
  }, 60_000);
});
