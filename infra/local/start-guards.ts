/**
 * What stops the local stack from starting, in words the operator can act on: a port in use,
 * a data folder another stack holds, a DynamoDB that cannot be reached.
 */
import { readFile, unlink, writeFile } from 'node:fs/promises';
import { isAbsolute, join, relative } from 'node:path';
import { networkErrorCode } from '../../functions/shared/runtime/network-errors';
import type { PortVariable } from './settings';

/** A port cannot be used; names the port and the variable that sets it. */
export class PortUnavailableError extends Error {
  readonly port: number;
  readonly variable: PortVariable;
  constructor(port: number, variable: PortVariable, code: string | undefined, options?: ErrorOptions) {
    const reason = code === 'EACCES' ? 'is not allowed for this user' : 'is already in use';
    super(`Port ${port} (${variable}) ${reason}: stop what is using it or set ${variable} to another port, e.g. ${variable}=${port + 1}.`, options);
    this.name = 'PortUnavailableError';
    this.port = port;
    this.variable = variable;
  }
}

/** The stack cannot start for a reason the operator can fix; the message says how. */
export class LocalStackError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'LocalStackError';
  }
}

export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export async function claimPort<T>(port: number, variable: PortVariable, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (error) {
    const code = errorCode(error);
    if (code === 'EADDRINUSE' || code === 'EACCES') throw new PortUnavailableError(port, variable, code, { cause: error });
    throw error;
  }
}

/** A path as the operator would type it: relative when under the current folder. */
export function displayPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) === 'EPERM';
  }
}

/**
 * LevelDB allows one user of a folder at a time, and dynalite crashes its process when that
 * goes wrong mid-request; so a second stack on the same data is stopped here, with a message.
 * A lock left by a stack that died is taken over.
 */
export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const path = join(dataDir, 'stack.pid');
  for (let attempt = 0; ; attempt++) {
    try {
      await writeFile(path, `${process.pid}\n`, { flag: 'wx' });
      return () => unlink(path).catch(() => undefined);
    } catch (error) {
      if (errorCode(error) !== 'EEXIST' || attempt > 0) throw error;
    }
    const pid = Number((await readFile(path, 'utf8').catch(() => '')).trim());
    if (Number.isInteger(pid) && pid > 0 && isRunning(pid)) {
      throw new LocalStackError(
        `Another local stack (pid ${pid}) is using ${displayPath(dataDir)}. Stop it, or set LOCAL_DATA_DIR to another folder or LOCAL_DATA=memory.`,
      );
    }
    await unlink(path).catch(() => undefined);
  }
}

export function describeStoreFault(error: unknown, endpoint: string, external: boolean): LocalStackError | undefined {
  const code = networkErrorCode(error);
  const where = external ? `DynamoDB at ${endpoint} (DYNAMODB_ENDPOINT)` : `the embedded DynamoDB at ${endpoint}`;
  return code ? new LocalStackError(`Cannot reach ${where} (${code}).`, { cause: error }) : undefined;
}

