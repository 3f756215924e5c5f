import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { mapWithConcurrency } from '../../functions/shared/runtime/pool';

describe('mapWithConcurrency', () => {
  it('keeps input order and the concurrency bound for any delays and limits', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat({ max: 5 }), { maxLength: 30 }), fc.integer({ min: 1, max: 8 }), async (delays, limit) => {
        let inFlight = 0;
        let peak = 0;
        const results = await mapWithConcurrency(delays, limit, async (delay, index) => {
          peak = Math.max(peak, ++inFlight);
          await new Promise((resolve) => setTimeout(resolve, delay));
          inFlight--;
          return index * 10;
        });
        expect(results).toEqual(delays.map((_, i) => i * 10));
        expect(peak).toBeLessThanOrEqual(limit);
        if (delays.length > 0) expect(peak).toBe(Math.min(limit, delays.length));
      }),
      { numRuns: 40 },
    );
  });
});
