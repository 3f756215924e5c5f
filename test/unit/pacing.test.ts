/**
 * The pacer: where the rate comes from, how turns are given out, and how the pace adapts to
 * throttling. The budget here is an in-memory one with the same arithmetic as the table's; the
 * table's own is tested against dynalite (send-budget.test.ts).
 */
import { describe, expect, it } from '@jest/globals';
import { Pacer } from '../../functions/send/pacing';
import type { Pace } from '../../functions/shared/domain/send-pace';
import { unitsThatFit } from '../../functions/shared/domain/send-pace';
import type { SendQuota } from '../../functions/shared/mail/ports';
import type { Reservation, SendBudget } from '../../functions/shared/store/ports';

class MemoryBudget implements SendBudget {
  tat = 0;
  writes = 0;
  async reserve(units: number, pace: Pace, now: number, lastSendAt: number): Promise<Reservation> {
    this.writes++;
    const start = Math.max(this.tat, now);
    const fit = Math.min(units, unitsThatFit(this.tat, now, lastSendAt, pace));
    this.tat = start + fit * pace.intervalMs;
    return { start, units: fit };
  }
}

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
  return { clock, source, budget, pacer: new Pacer({ budget, quota: source, maxSendRate: options.maxSendRate, now: () => clock.t }) };
}

describe('Pacer', () => {
  it('gives every message a turn at the rate, a message costing one unit per recipient', async () => {
    const { pacer: p, clock } = pacer({ rates: [10] });
    const plan = await p.plan([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3], clock.t + 60_000);
    const offsets = plan.sendAt.map((at) => (at === undefined ? undefined : Math.round(at - clock.t)));
    // Nine at once (a second's worth less the slack), then one recipient every 100 ms; the
    // three-recipient message goes at the turn of its last recipient.
    expect(offsets).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 100, 400]);
    expect(plan.retryAt).toBeUndefined();
  });

  it('reserves a whole request in one write', async () => {
    const { pacer: p, budget, clock } = pacer({ rates: [14] });
    await p.plan(Array(100).fill(1), clock.t + 25_000);
    expect((budget as MemoryBudget).writes).toBe(1);
  });

  it('gives no turn to messages that cannot go before the deadline, and says when the budget has room', async () => {
    const { pacer: p, clock } = pacer({ rates: [10] });
    const plan = await p.plan(Array(30).fill(1), clock.t + 1_000);
    const untried = plan.sendAt.filter((at) => at === undefined).length;
    expect(untried).toBe(30 - 19);
    expect(plan.sendAt.slice(0, 19).every((at) => at !== undefined && at <= clock.t + 1_000)).toBe(true);
    expect(plan.retryAt! - clock.t).toBeCloseTo(1_100, 6);
  });

  it('does not pace at all when the endpoint cannot say what the rate is', async () => {
    const { pacer: p, budget, clock } = pacer({ rates: [undefined] });
    const plan = await p.plan([1, 1, 1], clock.t + 1_000);
    expect(plan.sendAt).toEqual([clock.t, clock.t, clock.t]);
    expect((budget as MemoryBudget).writes).toBe(0);
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
    const gap = async () => {
      const plan = await p.plan([1, 1], clock.t + 60_000);
      return Math.round(plan.sendAt[1]! - plan.sendAt[0]!);
    };
    await p.plan(Array(20).fill(1), clock.t + 60_000); // a busy budget: every turn is one interval after the last
    expect(await gap()).toBe(100);
    p.throttled();
    expect(await gap()).toBe(200);
    p.throttled();
    expect(await gap()).toBe(400);
    clock.t += 60_000;
    await p.plan(Array(20).fill(1), clock.t + 60_000);
    expect(await gap()).toBe(100); // a minute without throttling: the full rate again
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
