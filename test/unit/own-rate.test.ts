/**
 * An Organization's own rate is a hard cap (CONTRACT section 11, item 5; security audit round 3,
 * finding 5), on a virtual clock: under an idle account, where turns would otherwise go unused,
 * its requests (on one instance or several: one shared state) book round by round at moments
 * fast-check draws, and every turn the Organization gets is checked against a bucket of its own
 * rate.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { RoundAsk, Turn } from '../../functions/shared/domain/fair-share';
import { EMPTY_STATE, bookRound } from '../../functions/shared/domain/fair-share';
import { paceFor } from '../../functions/shared/domain/send-pace';
import { MemoryBudget } from '../support/memory-budget';

const NOW = 1_000_000;
const ones = (n: number) => Array.from({ length: n }, () => ({ units: 1 }));
const numbers = (turns: readonly Turn[]) => turns.filter((t): t is number => typeof t === 'number');
const ask = (overrides: Partial<RoundAsk>): RoundAsk => ({ organizationId: 'capped', weight: 1, pace: paceFor(20), messages: ones(1), now: NOW, lastSendAt: NOW + 25_000, ...overrides });

/** True if a bucket of `burst` tokens refilled at `rate` per second lets every one of these (sorted) times go. */
function withinOwnRate(times: readonly number[], rate: number): boolean {
  const burst = Math.max(1, Math.floor(rate));
  for (let i = 0; i < times.length; i++) {
    for (let j = i + burst; j < times.length; j++) if (times[j]! - times[i]! < ((j - i + 1 - burst) * 1_000) / rate - 1e-6) return false;
  }
  return true;
}

describe('an Organization’s own rate (bookRound, simulated)', () => {
  const own = (cap: number, requests: number, messages: number, delays: readonly number[]) => {
    const budget = new MemoryBudget();
    const pace = paceFor(20);
    const pending = Array.from({ length: requests }, (_, i) => ({ left: Math.ceil(messages / requests), nextAt: NOW + (delays[i % delays.length] ?? 0) }));
    const turns: number[] = [];
    for (let step = 0; step < 10_000; step++) {
      const live = pending.filter((r) => r.left > 0 && Number.isFinite(r.nextAt));
      if (live.length === 0) break;
      const request = live.reduce((a, b) => (b.nextAt < a.nextAt ? b : a));
      const now = request.nextAt;
      const round = budget.bookNow({ organizationId: 'capped', weight: 1, cap, pace, messages: ones(request.left), now, lastSendAt: now + 600_000 });
      turns.push(...numbers(round.turns));
      request.left -= round.turns.length;
      request.nextAt = round.stop === 'wait' ? round.at + (delays[(step + 1) % delays.length] ?? 0) : Number.POSITIVE_INFINITY;
    }
    return turns.sort((a, b) => a - b);
  };

  it('takes at least 14 s for 16 one-recipient messages at --rate 1 on an idle 20/s account', () => {
    const turns = own(1, 1, 16, [0]);
    expect(turns).toHaveLength(16);
    expect(turns.at(-1)! - turns[0]!).toBeGreaterThanOrEqual(14_000);
  });

  it('never lets an Organization beyond its own rate, from one request or several, however rounds fall', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(1, 5, 2.5),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 8, max: 40 }),
        fc.array(fc.integer({ min: 0, max: 120 }), { minLength: 1, maxLength: 8 }),
        (cap, requests, messages, delays) => {
          const turns = own(cap, requests, messages, delays);
          expect(turns).toHaveLength(requests * Math.ceil(messages / requests));
          expect(withinOwnRate(turns, cap)).toBe(true);
          // And it is not held back further than its own rate requires: the last turn comes
          // within a second of when a bucket of its own rate would first allow it, plus the
          // lateness of the rounds themselves (each comes up to max(delays) after its moment).
          const ideal = ((turns.length - Math.max(1, Math.floor(cap))) * 1_000) / cap;
          expect(turns.at(-1)! - NOW).toBeLessThan(ideal + 1_000 + (turns.length + 1) * Math.max(...delays));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('keeps the cap across a gap between requests: the next one does not get a fresh burst too soon', () => {
    const budget = new MemoryBudget();
    const pace = paceFor(20);
    const first = budget.bookNow({ organizationId: 'capped', weight: 1, cap: 1, pace, messages: ones(1), now: NOW, lastSendAt: NOW + 25_000 });
    expect(numbers(first.turns)).toEqual([NOW]);
    // Its only turn is spent, nothing is held, but its own schedule is a second ahead.
    const second = budget.bookNow({ organizationId: 'capped', weight: 1, cap: 1, pace, messages: ones(1), now: NOW + 300, lastSendAt: NOW + 25_000 });
    expect(second.turns).toEqual([]);
    expect(second.stop).toBe('wait');
    expect(second.at).toBe(NOW + 1_000);
  });

  it('reports a message that its own rate cannot let go before the deadline as such, with when it could', () => {
    const round = bookRound(EMPTY_STATE, ask({ cap: 1, messages: ones(3), lastSendAt: NOW + 500 }));
    expect(round.turns).toEqual([NOW]);
    expect(round.stop).toBe('deadline');
    expect(round.at).toBe(NOW + 1_000);
  });
});
