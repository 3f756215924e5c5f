/**
 * moto_server (moto 5) for the tests of code that only runs in an AWS account: SQS, KMS, Cognito,
 * EventBridge Scheduler. One server per test file, on a free port of 127.0.0.1, stopped after it.
 *
 * A laptop without `moto_server` on the PATH skips these suites and says so. Under `CI=true` a
 * missing moto is a failure instead: every CI machine of this kind has it, so a skip there would
 * hide that the AWS-only adapters ran nowhere.
 */
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { describe, it } from '@jest/globals';
import { freePort } from '../local/helpers';

export const motoAvailable = spawnSync('sh', ['-c', 'command -v moto_server'], { encoding: 'utf8' }).status === 0;

/** What every client built against moto needs: a loopback endpoint, a region and dummy keys. */
export interface MotoClientConfig {
  endpoint: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
}

export interface Moto {
  config: MotoClientConfig;
  /** Forgets every resource (moto's reset), so one test's queues and keys don't reach the next. */
  reset(): Promise<void>;
  stop(): Promise<void>;
}

export const MOTO_REGION = 'us-east-1';
/** The account id moto puts in every ARN it makes. */
export const MOTO_ACCOUNT = '123456789012';

/**
 * `describe` for a suite that needs moto_server: runs it when moto is on the PATH; otherwise skips
 * it with a warning, or, under `CI=true`, replaces it with one failing test naming what is missing.
 */
export function describeWithMoto(name: string, body: () => void): void {
  if (motoAvailable) {
    describe(name, body);
    return;
  }
  if (process.env.CI === 'true') {
    describe(name, () => {
      it('needs moto_server, which CI machines have', () => {
        throw new Error('moto_server is not on the PATH (pip install "moto[server]"); under CI=true this suite may not skip');
      });
    });
    return;
  }
  console.warn(`skipped "${name}": moto_server is not on the PATH (pip install "moto[server]")`);
  describe.skip(name, body);
}

/** Starts moto_server on a free loopback port and waits until it answers. */
export async function startMoto(): Promise<Moto> {
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn('moto_server', ['-H', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 20_000;
  while (!(await fetch(`${endpoint}/moto-api/`).then((r) => r.ok, () => false))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill();
      throw new Error(`moto_server did not start on ${endpoint}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    config: { endpoint, region: MOTO_REGION, credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' } },
    async reset() {
      const response = await fetch(`${endpoint}/moto-api/reset`, { method: 'POST' });
      if (!response.ok) throw new Error(`moto reset answered ${response.status}`);
    },
    async stop() {
      if (child.exitCode === null) {
        child.kill();
        await exited;
      }
    },
  };
}
