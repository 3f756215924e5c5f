/**
 * How `mapWithConcurrency` schedules, beyond the order of results and the bound (pool.test.ts):
 * messages are handed out in request order, each exactly once, and a slow one holds back no other.
 * Completion is driven by hand, so nothing here depends on timing.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { mapWithConcurrency } from '../../functions/shared/runtime/pool';

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('mapWithConcurrency scheduling', () => {
  it('starts the items in input order, each exactly once, whatever order they finish in', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 25 }), fc.integer({ min: 1, max: 8 }), fc.integer(), async (count, limit, seed) => {
        const started: number[] = [];
        const pending = new Map<number, ReturnType<typeof deferred<number>>>();
        const run = mapWithConcurrency(Array.from({ length: count }, (_, i) => i), limit, (item) => {
          started.push(item);
          const d = deferred<number>();
          pending.set(item, d);
          return d.promise;
        });
        // Finish whatever is in flight in a seeded shuffled order until nothing is left.
        let state = seed;
        for (let guard = 0; guard <= count; guard++) {
          await settle();
          const inFlight = [...pending.keys()];
          if (inFlight.length === 0) break;
          state = (state * 1_103_515_245 + 12_345) & 0x7fffffff;
          const pick = inFlight[state % inFlight.length]!;
          pending.get(pick)!.resolve(pick * 2);
          pending.delete(pick);
        }
        expect(await run).toEqual(Array.from({ length: count }, (_, i) => i * 2));
        expect(started).toEqual(Array.from({ length: count }, (_, i) => i));
      }),
      { numRuns: 60 },
    );
  });

  it('keeps the other slots busy while one item is slow', async () => {
    const slow = deferred<string>();
    const started: number[] = [];
    const run = mapWithConcurrency([0, 1, 2, 3, 4, 5], 2, async (item) => {
      started.push(item);
      return item === 0 ? slow.promise : `fast ${item}`;
    });
    await settle();
    // Item 0 is still in flight; the second slot has worked through every other item meanwhile.
    expect(started).toEqual([0, 1, 2, 3, 4, 5]);
    slow.resolve('slow 0');
    expect(await run).toEqual(['slow 0', 'fast 1', 'fast 2', 'fast 3', 'fast 4', 'fast 5']);
  });

  it('runs one at a time when the limit is below 1', async () => {
    let inFlight = 0;
    let peak = 0;
    const results = await mapWithConcurrency([1, 2, 3], 0, async (item) => {
      peak = Math.max(peak, ++inFlight);
      await settle();
      inFlight--;
      return item;
    });
    expect(results).toEqual([1, 2, 3]);
    expect(peak).toBe(1);
  });
});
