/**
 * The benchmark runs the emulators and the local stack in child processes of their own, so that
 * the process taking the measurements (and holding the baseline's SDK client) does not share its
 * event loop with them; SES and DynamoDB are remote services in AWS, after all. Parent and child
 * talk over Node's IPC channel: the child announces itself once, then answers calls.
 */
import type { ChildProcess } from 'node:child_process';
import { fork } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';

type Message =
  | { readonly type: 'ready'; readonly info: unknown }
  | { readonly type: 'result'; readonly id: number; readonly value?: unknown; readonly error?: string };

export interface Child<Info> {
  readonly pid: number;
  readonly info: Info;
  call<T>(op: string, args?: unknown): Promise<T>;
  /** Asks the child to shut down, and kills it (this one process) if it has not within 5 s. */
  stop(): Promise<void>;
}

export interface ForkOptions {
  readonly env?: Readonly<Record<string, string>>;
  /** The child's stdout and stderr go here (its own logs would garble the benchmark's output). */
  readonly logFile: string;
  readonly startTimeoutMs?: number;
  readonly callTimeoutMs?: number;
}

/** Starts `file` (TypeScript, through tsx) and waits for its `ready` message. */
export async function forkChild<Info>(file: string, options: ForkOptions): Promise<Child<Info>> {
  const log = openSync(options.logFile, 'w');
  let child: ChildProcess;
  try {
    child = fork(file, [], {
      execArgv: ['--import', import.meta.resolve('tsx')],
      env: { ...process.env, ...options.env },
      stdio: ['ignore', log, log, 'ipc'],
    });
  } finally {
    closeSync(log);
  }
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
  let nextId = 1;
  let exited: string | undefined;

  const info = await new Promise<Info>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${file} did not start within ${options.startTimeoutMs ?? 60_000} ms (see ${options.logFile})`)), options.startTimeoutMs ?? 60_000);
    child.once('exit', (code, signal) => {
      exited = `exited with ${signal ?? `code ${code}`}`;
      clearTimeout(timer);
      reject(new Error(`${file} ${exited} before it was ready (see ${options.logFile})`));
      for (const { reject: fail, timer: t } of pending.values()) {
        clearTimeout(t);
        fail(new Error(`${file} ${exited} (see ${options.logFile})`));
      }
      pending.clear();
    });
    child.on('message', (message: Message) => {
      if (message.type === 'ready') {
        clearTimeout(timer);
        resolve(message.info as Info);
      } else if (message.type === 'result') {
        const waiting = pending.get(message.id);
        if (!waiting) return;
        pending.delete(message.id);
        clearTimeout(waiting.timer);
        if (message.error !== undefined) waiting.reject(new Error(`${file}: ${message.error}`));
        else waiting.resolve(message.value);
      }
    });
  }).catch((error: unknown) => {
    if (child.exitCode === null) child.kill('SIGKILL');
    throw error;
  });

  return {
    pid: child.pid ?? -1,
    info,
    call<T>(op: string, args?: unknown): Promise<T> {
      if (exited) return Promise.reject(new Error(`${file} ${exited} (see ${options.logFile})`));
      const id = nextId++;
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`${file} did not answer "${op}" within ${options.callTimeoutMs ?? 60_000} ms`));
        }, options.callTimeoutMs ?? 60_000);
        pending.set(id, { resolve: resolve as (value: unknown) => void, reject, timer });
        child.send({ type: 'call', id, op, args });
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      if (child.connected) child.send({ type: 'call', id: 0, op: 'stop' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await gone;
      clearTimeout(timer);
    },
  };
}

/**
 * The child's side: announce `info`, answer calls with `ops`, and on `stop` (or when the parent
 * goes away) run `shutdown` and exit.
 */
export function serveParent(info: unknown, ops: Readonly<Record<string, (args: any) => Promise<unknown>>>, shutdown: () => Promise<void>): void {
  if (!process.send) throw new Error('this module runs as a child of the benchmark (npm run bench)');
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await shutdown().catch(() => undefined);
    process.exit(0);
  };
  process.on('disconnect', () => void stop());
  process.on('message', (message: { type: string; id: number; op: string; args?: unknown }) => {
    if (message.type !== 'call') return;
    if (message.op === 'stop') return void stop();
    const op = ops[message.op];
    const reply = (result: { value?: unknown; error?: string }) => {
      if (process.connected) process.send?.({ type: 'result', id: message.id, ...result });
    };
    if (!op) return reply({ error: `unknown operation ${message.op}` });
    op(message.args).then(
      (value) => reply({ value }),
      (error: unknown) => reply({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
    );
  });
  process.send({ type: 'ready', info });
}
