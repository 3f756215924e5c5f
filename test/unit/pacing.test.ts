/**
 * The pacer: where the rate comes from, how turns are given out, and how the pace adapts to
 * throttling. The budget here is an in-memory one with the same arithmetic as the table's; the
 * table's own is tested against dynalite (send-budget.test.ts).
 */
import { describe, expect, it } from '@jest/globals';
import type { MessageTurn } from '../../functions/send/pacing';
import { Pacer } from '../../functions/send/pacing';
import type { SendQuota } from '../../functions/shared/mail/ports';
import type { SendBudget } from '../../functions/shared/store/ports';
import { MemoryBudget } from '../support/memory-budget';

function quota(rates: (number | undefined | Error)[]): SendQuota & { calls: number } {
  const source = {
    calls: 0,
    async maxSendRate() {
      const next = rates[Math.min(source.calls++, rates.length - 1)];
      if (next instanceof Error) throw next;
      return next;
    },
  };
  return source;
}

function pacer(options: { rates?: (number | undefined | Error)[]; maxSendRate?: number; budget?: SendBudget; clock?: { t: number } } = {}) {
  const clock = options.clock ?? { t: 1_000_000 };
  const source = quota(options.rates ?? [10]);
  const budget = options.budget ?? new MemoryBudget();
  // Sleeping moves the virtual clock on, as time would.
  const sleep = async (ms: number) => void (clock.t += ms);
  return { clock, source, budget, pacer: new Pacer({ budget, quota: source, maxSendRate: options.maxSendRate, now: () => clock.t, sleep }) };
}

const org = { organizationId: 'o1', weight: 1 };

/** Every message's turn, asked in order as the sending workers ask. */
async function turns(p: Pacer, units: number[], lastSendAt: number, sharer = org): Promise<{ turns: MessageTurn[]; retryAt: number | undefined }> {
  const booking = p.begin(sharer, units.map((n) => ({ units: n })), lastSendAt);
  const all: MessageTurn[] = [];
  for (let i = 0; i < units.length; i++) all.push(await booking.turn(i));
  return { turns: all, retryAt: booking.retryAt };
}

describe('Pacer', () => {
  it('gives every message a turn at the rate, a message costing one unit per recipient', async () => {
    const { pacer: p, clock } = pacer({ rates: [10] });
    const start = clock.t;
    const plan = await turns(p, [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3], clock.t + 60_000);
    const offsets = plan.turns.map((at) => (typeof at === 'number' ? Math.round(at - start) : at));
    // Nine at once (a second's worth less the slack), then one recipient every 100 ms; the
    // three-recipient message goes at the turn of its last recipient.
    expect(offsets).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 100, 400]);
    expect(plan.retryAt).toBeUndefined();
  });

  it('books a request that fits in the horizon in one write, and a longer one in a few rounds, not one per message', async () => {
    const small = pacer({ rates: [14] });
    await turns(small.pacer, Array(20).fill(1), small.clock.t + 25_000);
    expect((small.budget as MemoryBudget).writes).toBe(1);
    const large = pacer({ rates: [14] });
    const plan = await turns(large.pacer, Array(100).fill(1), large.clock.t + 25_000);
    expect(plan.turns.every((at) => typeof at === 'number')).toBe(true);
    expect((large.budget as MemoryBudget).writes).toBeLessThanOrEqual(10);
  });

  it('gives no turn to messages that cannot go before the deadline, and says when the budget has room', async () => {
    const { pacer: p, clock } = pacer({ rates: [10] });
    const start = clock.t;
    const plan = await turns(p, Array(30).fill(1), clock.t + 1_000);
    const untried = plan.turns.filter((at) => at === 'none').length;
    expect(untried).toBe(30 - 19);
    expect(plan.turns.slice(0, 19).every((at) => typeof at === 'number' && at <= start + 1_000)).toBe(true);
    expect(plan.retryAt! - start).toBeCloseTo(1_100, 6);
  });

  it('gives an expired message no turn, and books nothing for it', async () => {
    const { pacer: p, clock, budget } = pacer({ rates: [10] });
    const booking = p.begin(org, [{ units: 1, expiresAt: clock.t - 1 }, { units: 1 }], clock.t + 10_000);
    expect(await booking.turn(0)).toBe('expired');
    expect(typeof (await booking.turn(1))).toBe('number');
    expect(heldUnits(budget as MemoryBudget, clock.t)).toBe(1);
  });

  it('does not pace at all, nor write, when the endpoint cannot say what the rate is and the Organization has no rate', async () => {
    const { pacer: p, budget, clock } = pacer({ rates: [undefined] });
    const plan = await turns(p, [1, 1, 1], clock.t + 1_000);
    expect(plan.turns).toEqual([clock.t, clock.t, clock.t]);
    expect((budget as MemoryBudget).writes).toBe(0);
  });

  it('paces an Organization with a rate of its own even when the account has none', async () => {
    const { pacer: p, clock } = pacer({ rates: [undefined] });
    const start = clock.t;
    const booking = p.begin({ ...org, rate: 2 }, Array.from({ length: 4 }, () => ({ units: 1 })), clock.t + 60_000);
    const all: MessageTurn[] = [];
    for (let i = 0; i < 4; i++) all.push(await booking.turn(i));
    expect(all.map((t) => Math.round((t as number) - start))).toEqual([0, 100, 600, 1_100]);
  });

  it('gives back turns its messages did not use', async () => {
    const { pacer: p, clock, budget } = pacer({ rates: [10] });
    const booking = p.begin(org, Array.from({ length: 15 }, () => ({ units: 1 })), clock.t + 60_000);
    for (let i = 0; i < 15; i++) await booking.turn(i);
    const before = heldUnits(budget as MemoryBudget, clock.t);
    await booking.finish((i) => i >= 10);
    expect(heldUnits(budget as MemoryBudget, clock.t)).toBe(before - 5);
  });

  it('asks SES once, trusts the answer for five minutes, then asks again (quotas get raised)', async () => {
    const { pacer: p, source, clock } = pacer({ rates: [10, 40] });
    expect(await p.rate()).toBe(10);
    clock.t += 60_000;
    expect(await p.rate()).toBe(10);
    expect(source.calls).toBe(1);
    clock.t += 5 * 60_000;
    expect(await p.rate()).toBe(40);
    expect(source.calls).toBe(2);
  });

  it('keeps the rate it knew when SES cannot be asked, and asks again soon', async () => {
    const { pacer: p, source, clock } = pacer({ rates: [10, new Error('socket hang up'), 20] });
    expect(await p.rate()).toBe(10);
    clock.t += 6 * 60_000;
    expect(await p.rate()).toBe(10);
    clock.t += 11_000;
    expect(await p.rate()).toBe(20);
    expect(source.calls).toBe(3);
  });

  it('takes SES_MAX_SEND_RATE without asking SES', async () => {
    const { pacer: p, source } = pacer({ maxSendRate: 3 });
    expect(await p.rate()).toBe(3);
    expect(source.calls).toBe(0);
  });

  it('halves its pace when SES throttles anyway, and climbs back to the full rate when it stops', async () => {
    const { pacer: p, clock } = pacer({ rates: [10] });
    const interval = async () => Math.round((await p.pace())!.intervalMs);
    expect(await interval()).toBe(100);
    p.throttled();
    expect(await interval()).toBe(200);
    p.throttled();
    expect(await interval()).toBe(400);
    // Turns are booked at that pace: two messages of a busy budget, one interval apart.
    await turns(p, [1], clock.t + 60_000);
    const plan = await turns(p, [1, 1], clock.t + 60_000);
    expect(Math.round((plan.turns[1] as number) - (plan.turns[0] as number))).toBe(400);
    clock.t += 60_000;
    expect(await interval()).toBe(100); // a minute without throttling: the full rate again
  });

  it('re-reads the rate soon after SES throttles (a quota lowered under us)', async () => {
    const { pacer: p, source, clock } = pacer({ rates: [10, 5] });
    expect(await p.rate()).toBe(10);
    p.throttled();
    clock.t += 11_000;
    expect(await p.rate()).toBe(5);
    expect(source.calls).toBe(2);
  });
});

function heldUnits(budget: MemoryBudget, now: number): number {
  return (budget.state.orgs.o1?.held ?? []).filter((h) => h.to >= now).reduce((sum, h) => sum + h.units, 0);
}

describe('Booking', () => {
  it('touches nothing when there is nothing to book', async () => {
    const { pacer: p, budget, clock } = pacer({ rates: [10] });
    const booking = p.begin(org, [], clock.t + 1_000);
    expect(await booking.turn(0)).toBe('none');
    expect((budget as MemoryBudget).writes).toBe(0);
  });

  it('fails the request when the budget cannot be reached before anything was sent, and only the rest after', async () => {
    const { pacer: p, clock } = pacer({ rates: [10], budget: new FailingBudget(0) });
    await expect(p.begin(org, [{ units: 1 }], clock.t + 1_000).turn(0)).rejects.toThrow('table unavailable');
    const later = pacer({ rates: [10], budget: new FailingBudget(1) });
    const booking = later.pacer.begin(org, Array.from({ length: 40 }, () => ({ units: 1 })), later.clock.t + 60_000);
    expect(typeof (await booking.turn(0))).toBe('number');
    expect(await booking.turn(39)).toBe('storage');
  });
});

/** A budget that books `rounds` rounds, then cannot be reached. */
class FailingBudget extends MemoryBudget {
  constructor(private rounds: number) {
    super();
  }

  override async book(...args: Parameters<MemoryBudget['book']>) {
    if (this.rounds-- <= 0) throw new Error('table unavailable');
    return super.book(...args);
  }
}
