import { availableParallelism } from 'node:os';
import { describe, expect, it } from '@jest/globals';
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
});
