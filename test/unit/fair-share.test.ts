/**
 * The fair share of the account's send rate (domain/fair-share.ts), on a virtual clock: what one
 * round books, how shares are split, what is refused, what corrupt state means, and, simulated
 * over many seconds with fast-check, that shares converge and the account is never over-spent.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { BudgetState, RoundAsk, Turn } from '../../functions/shared/domain/fair-share';
import { EMPTY_STATE, HORIZON_MS, bookRound, fairRates, heldAhead, releaseTurns, sanitize } from '../../functions/shared/domain/fair-share';
import { paceFor } from '../../functions/shared/domain/send-pace';
import { MemoryBudget } from '../support/memory-budget';

const NOW = 1_000_000;
const ones = (n: number, expiresAt?: number) => Array.from({ length: n }, () => ({ units: 1, ...(expiresAt !== undefined && { expiresAt }) }));
const ask = (overrides: Partial<RoundAsk> = {}): RoundAsk => ({
  organizationId: 'a',
  weight: 1,
  pace: paceFor(20),
  messages: ones(10),
  now: NOW,
  lastSendAt: NOW + 25_000,
  ...overrides,
});
const numbers = (turns: readonly Turn[]) => turns.filter((t): t is number => typeof t === 'number');

describe('bookRound', () => {
  it('gives one Organization alone the whole rate: a burst at once, then one turn per interval, one horizon’s worth', () => {
    const round = bookRound(EMPTY_STATE, ask({ messages: ones(100) }));
    expect(round.stop).toBe('wait');
    const offsets = numbers(round.turns).map((t) => Math.round(t - NOW));
    // Twenty a second: 18 at once (a second's worth less the 100 ms slack), then every 50 ms to the horizon.
    expect(offsets.slice(0, 18)).toEqual(Array(18).fill(0));
    expect(offsets.slice(18, 21)).toEqual([50, 100, 150]);
    // It holds one horizon's worth of turns (two seconds at 20/s), and books more as they pass.
    expect(round.turns.length).toBe(40);
    expect(offsets.at(-1)).toBeLessThanOrEqual(HORIZON_MS);
    expect(round.at).toBeGreaterThan(NOW);
  });

  it('books a request that fits in one round at once, and says it is done', () => {
    const round = bookRound(EMPTY_STATE, ask({ messages: ones(5) }));
    expect(round).toMatchObject({ stop: 'done' });
    expect(round.turns).toHaveLength(5);
    expect(round.holding).toMatchObject({ units: 5 });
  });

  it('keeps a newcomer behind at most one horizon of another Organization’s flood, and gives it its share', () => {
    const flooded = bookRound(EMPTY_STATE, ask({ organizationId: 'a', messages: ones(800) })).state;
    const later = NOW + 1_000;
    const b = bookRound(flooded, ask({ organizationId: 'b', messages: ones(10), now: later }));
    expect(b.stop).toBe('done');
    // B's last turn comes within the horizon A booked plus its own ten.
    expect(Math.max(...numbers(b.turns)) - later).toBeLessThan(HORIZON_MS);
    // A, back for more, now holds at most half the horizon's turns.
    const a = bookRound(b.state, ask({ organizationId: 'a', messages: ones(800), now: later + 100 }));
    expect(a.stop).toBe('wait');
    expect(heldAhead(a.state.orgs.a!.held, later + 100)).toBeLessThanOrEqual(Math.floor((20 * HORIZON_MS) / 1_000));
  });

  it('lets an Organization over its share take turns that would otherwise go unused', () => {
    // B waits (its share is kept for it) but holds nothing; the account is idle right now.
    const state: BudgetState = { tat: 0, orgs: { b: { weight: 1, activeUntil: NOW + 1_500, held: [] } } };
    const round = bookRound(state, ask({ organizationId: 'a', messages: ones(40) }));
    // Half of the horizon's 40 turns is its share; the burst right now is free for the taking.
    expect(numbers(round.turns).length).toBeGreaterThanOrEqual(20);
  });

  it('books nothing for a message that expires before its turn', () => {
    const busy = bookRound(EMPTY_STATE, ask({ organizationId: 'b', messages: ones(30) })).state;
    const round = bookRound(busy, ask({ messages: [...ones(3, NOW + 10), ...ones(2)] }));
    expect(round.turns.slice(0, 3)).toEqual(['expired', 'expired', 'expired']);
    expect(numbers(round.turns)).toHaveLength(2);
    expect(round.holding?.units).toBe(2);
  });

  it('stops at the deadline and says when the budget has room again', () => {
    const round = bookRound(EMPTY_STATE, ask({ messages: ones(100), lastSendAt: NOW + 500 }));
    expect(round.stop).toBe('deadline');
    expect(numbers(round.turns).every((t) => t <= NOW + 500)).toBe(true);
    expect(round.at).toBeGreaterThan(NOW + 500);
    expect(round.at).toBeLessThan(NOW + 1_000);
  });

  it('paces an Organization by its own rate when the account has none', () => {
    const round = bookRound(EMPTY_STATE, ask({ pace: undefined, cap: 2, messages: ones(6) }));
    const offsets = numbers(round.turns).map((t) => Math.round(t - NOW));
    // Two a second: its second's worth less the slack, then every 500 ms.
    expect(offsets.slice(0, 4)).toEqual([0, 100, 600, 1_100]);
  });

  it('lets every message go at once when neither the account nor the Organization has a rate', () => {
    const round = bookRound(EMPTY_STATE, ask({ pace: undefined, messages: ones(3) }));
    expect(round).toMatchObject({ stop: 'done', turns: [NOW, NOW, NOW] });
    expect(round.state).toBe(EMPTY_STATE);
  });
});

describe('fairRates', () => {
  it('splits the rate by weight', () => {
    const rates = fairRates({ a: { weight: 3 }, b: { weight: 1 } }, 20);
    expect(rates.get('a')).toBeCloseTo(15);
    expect(rates.get('b')).toBeCloseTo(5);
  });

  it('gives what a capped Organization cannot use to the others', () => {
    const rates = fairRates({ a: { weight: 1, cap: 2 }, b: { weight: 1 }, c: { weight: 2 } }, 20);
    expect(rates.get('a')).toBe(2);
    expect(rates.get('b')).toBeCloseTo(6);
    expect(rates.get('c')).toBeCloseTo(12);
  });

  it('gives one Organization alone the whole rate', () => {
    expect(fairRates({ a: { weight: 5 } }, 14).get('a')).toBeCloseTo(14);
  });
});

describe('sanitize', () => {
  it.each([
    ['not a number', 'soon'],
    ['NaN', Number.NaN],
    ['far in the future', 1e30],
    ['an hour ahead (a clock running ahead)', NOW + 3_600_000],
  ])('treats a budget whose TAT is %s as idle', (_, tat) => {
    const state = sanitize({ tat, orgs: {} }, NOW, paceFor(20));
    expect(state.tat).toBe(0);
    const round = bookRound(state, ask({ messages: ones(1) }));
    expect(round.turns).toEqual([NOW]);
  });

  it('drops entries that are not entries, and holdings already spent', () => {
    const state = sanitize(
      {
        tat: NOW,
        orgs: {
          junk: 'x',
          spent: { weight: 1, activeUntil: NOW - 1, held: [[NOW - 900, NOW - 100, 3]] },
          bad: { weight: 'heavy', activeUntil: NOW + 1_000, held: [[NOW, 'later', 2]] },
          ok: { weight: 2, activeUntil: NOW + 1_000, held: [[NOW, NOW + 500, 4]] },
        },
      },
      NOW,
      paceFor(20),
    );
    expect(Object.keys(state.orgs).sort()).toEqual(['bad', 'ok']);
    expect(state.orgs.bad).toEqual({ weight: 1, activeUntil: NOW + 1_000, held: [] });
    expect(state.orgs.ok!.held).toEqual([{ from: NOW, to: NOW + 500, units: 4 }]);
  });
});

describe('releaseTurns', () => {
  it('frees the share at once, and the account’s schedule when nobody booked after', () => {
    const pace = paceFor(20);
    const round = bookRound(EMPTY_STATE, ask({ messages: ones(30) }));
    const released = releaseTurns(round.state, { organizationId: 'a', holding: round.holding!, unused: 10, tatAfter: round.state.tat }, pace, NOW);
    expect(released.tat).toBeCloseTo(round.state.tat - 10 * pace.intervalMs, 6);
    expect(heldAhead(released.orgs.a!.held, NOW)).toBe(20);
  });

  it('leaves the account’s schedule alone when someone booked after', () => {
    const pace = paceFor(20);
    const round = bookRound(EMPTY_STATE, ask({ messages: ones(30) }));
    const after = bookRound(round.state, ask({ organizationId: 'b', messages: ones(5) }));
    const released = releaseTurns(after.state, { organizationId: 'a', holding: round.holding!, unused: 10, tatAfter: round.state.tat }, pace, NOW);
    expect(released.tat).toBe(after.state.tat);
    expect(heldAhead(released.orgs.a!.held, NOW)).toBe(20);
  });
});

/**
 * Where a simulation's timing jitter comes from: numbers in [0, 1) drawn by fast-check, so that a
 * failing run shrinks and replays from its seed (never Math.random).
 */
type Jitter = () => number;
const jitters = fc.infiniteStream(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true })).map((stream): Jitter => {
  const numbers = stream[Symbol.iterator]();
  return () => numbers.next().value as number;
});

/**
 * Organizations sending on a virtual clock: each has requests that book round by round, as the
 * pacer does, and every turn booked is recorded.
 */
function simulate(rate: number, orgs: { id: string; weight: number; messages: number; startAt: number; requests: number }[], untilMs: number, jitter: Jitter) {
  const budget = new MemoryBudget();
  const pace = paceFor(rate);
  const turns: { org: string; at: number }[] = [];
  const requests = orgs.flatMap((org) =>
    Array.from({ length: org.requests }, () => ({ org, left: Math.ceil(org.messages / org.requests), nextAt: org.startAt + jitter() * 10 })),
  );
  for (let guard = 0; guard < 100_000; guard++) {
    const live = requests.filter((r) => r.left > 0 && r.nextAt <= untilMs);
    if (live.length === 0) break;
    const request = live.reduce((a, b) => (b.nextAt < a.nextAt ? b : a));
    const now = request.nextAt;
    const round = budget.bookNow({ organizationId: request.org.id, weight: request.org.weight, pace, messages: ones(request.left), now, lastSendAt: now + 600_000 });
    for (const at of numbers(round.turns)) turns.push({ org: request.org.id, at });
    request.left -= round.turns.length;
    request.nextAt = round.stop === 'wait' ? round.at + jitter() * 50 : Number.POSITIVE_INFINITY;
  }
  return { turns, writes: budget.writes };
}

/** Replays turns against SES's own limit (a bucket of one second's worth refilled at the rate): true if none would be throttled. */
function sesWouldAccept(times: number[], rate: number): boolean {
  const sorted = [...times].sort((a, b) => a - b);
  let tokens = Math.max(1, Math.floor(rate));
  let at = sorted[0] ?? 0;
  for (const t of sorted) {
    tokens = Math.min(Math.max(1, Math.floor(rate)), tokens + ((t - at) * rate) / 1_000);
    at = t;
    if (tokens < 1 - 1e-6) return false;
    tokens -= 1;
  }
  return true;
}

describe('fair share over time (simulated)', () => {
  it('never books more than SES accepts, and shares converge to the weights while both wait', () => {
    fc.assert(
      fc.property(fc.integer({ min: 10, max: 60 }), fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 8 }), jitters, (rate, weight, requestsOfA, jitter) => {
        const { turns } = simulate(
          rate,
          [
            { id: 'a', weight, messages: rate * 40, startAt: 0, requests: requestsOfA },
            { id: 'b', weight: 1, messages: rate * 40, startAt: 1_000, requests: 1 },
          ],
          20_000,
          jitter,
        );
        expect(sesWouldAccept(turns.map((t) => t.at), rate)).toBe(true);
        // While both are flooding (after the first horizons), they split the rate by weight (to within
        // one recipient per horizon each: at SES's production rates, 10/s and up, that is close).
        const inWindow = (org: string) => turns.filter((t) => t.org === org && t.at >= 5_000 && t.at < 15_000).length;
        // Each gets its weight's fraction of what was sent, to within ten points (shares are whole
        // recipients per horizon and rounds come at their own times, so at 10/s a share of 2/s
        // can come out as 1.8/s).
        const fractionOfA = inWindow('a') / Math.max(1, inWindow('a') + inWindow('b'));
        expect(Math.abs(fractionOfA - weight / (weight + 1))).toBeLessThan(0.1);
        // And nothing of the rate is left idle meanwhile.
        expect(inWindow('a') + inWindow('b')).toBeGreaterThanOrEqual(Math.floor(rate * 10 * 0.9));
      }),
      { numRuns: 25 },
    );
  });

  it('sends a newcomer’s ten messages within about a second of its share, whatever another Organization floods', () => {
    fc.assert(
      fc.property(jitters, (jitter) => {
        const { turns } = simulate(20, [
          { id: 'a', weight: 1, messages: 800, startAt: 0, requests: 8 },
          { id: 'b', weight: 1, messages: 10, startAt: 1_000, requests: 1 },
        ], 60_000, jitter);
        const lastOfB = Math.max(...turns.filter((t) => t.org === 'b').map((t) => t.at));
        expect(turns.filter((t) => t.org === 'b')).toHaveLength(10);
        expect(lastOfB - 1_000).toBeLessThan(3_000);
      }),
      { numRuns: 20 },
    );
  });

  it('costs about one write per request per second of sending, not one per message', () => {
    fc.assert(
      fc.property(jitters, (jitter) => {
        const { turns, writes } = simulate(14, [{ id: 'a', weight: 1, messages: 100, startAt: 0, requests: 1 }], 60_000, jitter);
        expect(turns).toHaveLength(100);
        expect(writes).toBeLessThanOrEqual(12);
      }),
      { numRuns: 20 },
    );
  });
});
