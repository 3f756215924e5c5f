import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { lambdaNode, lambdaNodeMajor } from '../../bench/lambda-node';
import { OptionsError, TASKSET, allowedCpus, parseOptions } from '../../bench/options';

describe('the bench\'s cold init options', () => {
  it('runs the imports on the last CPU when taskset is there, on any when told "none", and on the one named', () => {
    const last = allowedCpus().at(-1);
    const options = (argv: string[], env: Record<string, string> = {}) => parseOptions(argv, env) as Exclude<ReturnType<typeof parseOptions>, 'help'>;
    expect(options([]).coldCpu).toBe(TASKSET ? last : undefined);
    expect(options(['--cold-cpu', 'none']).coldCpu).toBeUndefined();
    expect(options([], { BENCH_COLD_CPU: 'none' }).coldCpu).toBeUndefined();
    if (TASKSET) expect(options(['--cold-cpu', '0']).coldCpu).toBe(0);
  });

  it('refuses a CPU the process may not use, or that is no number', () => {
    expect(() => parseOptions(['--cold-cpu', String(Math.max(...allowedCpus()) + 1)], {})).toThrow(OptionsError);
    expect(() => parseOptions(['--cold-cpu', 'first'], {})).toThrow(/--cold-cpu \(BENCH_COLD_CPU\) must be one of the CPUs this process may use/);
  });

  it('reads the CPUs the process may use from Linux\'s Cpus_allowed_list, and all of them without one', () => {
    expect(allowedCpus('Name:\tnode\nCpus_allowed_list:\t2-3,6\nMems_allowed:\t1\n')).toEqual([2, 3, 6]);
    expect(allowedCpus('Cpus_allowed_list:\t0\n')).toEqual([0]);
    expect(allowedCpus('')).toEqual(Array.from({ length: availableParallelism() }, (_, cpu) => cpu));
  });

  it('takes 30 fresh processes per bundle for the cold init, 5 in a quick run', () => {
    expect((parseOptions([], {}) as { coldRuns: number }).coldRuns).toBe(30);
    expect((parseOptions(['--quick'], {}) as { coldRuns: number }).coldRuns).toBe(5);
  });
  it('imports in the node binary named, or in the Node.js major Lambda runs the functions on for "lambda", and refuses a path that is not there', () => {
    const coldNode = (argv: string[], env: Record<string, string> = {}) => (parseOptions(argv, env) as { coldNode: string | undefined }).coldNode;
    expect(coldNode([])).toBeUndefined();
    expect(coldNode(['--node', process.execPath])).toBe(process.execPath);
    expect(coldNode([], { BENCH_NODE: 'lambda' })).toBe('lambda');
    expect(() => parseOptions(['--node', '/nowhere/node'], {})).toThrow(/must name a node binary or "lambda"/);
  });

  it('takes the Lambda runtime\'s Node.js major from the stack\'s runtime, and this node when it is that major', async () => {
    expect(lambdaNodeMajor('nodejs24.x')).toBe(24);
    expect(lambdaNodeMajor('nodejs22.x')).toBe(22);
    expect(() => lambdaNodeMajor('python3.13')).toThrow(/names no Node.js major/);
    const major = lambdaNodeMajor();
    const fetched: string[] = [];
    // This node, when it is the runtime's major: nothing is fetched.
    await expect(lambdaNode((line) => fetched.push(line), '/nowhere', { version: `${major}.1.0`, execPath: '/opt/node/bin/node' })).resolves.toBe('/opt/node/bin/node');
    // Another major: the copy fetched before, kept under the cache folder, without fetching it again.
    const cache = mkdtempSync(join(tmpdir(), 'lambda-node-'));
    try {
      mkdirSync(join(cache, `node-${major}`, 'package', 'bin'), { recursive: true });
      writeFileSync(join(cache, `node-${major}`, 'package', 'bin', 'node'), '');
      await expect(lambdaNode((line) => fetched.push(line), cache, { version: `${major - 1}.0.0`, execPath: process.execPath })).resolves.toBe(join(cache, `node-${major}`, 'package', 'bin', 'node'));
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
    expect(fetched).toEqual([]);
  });
});
