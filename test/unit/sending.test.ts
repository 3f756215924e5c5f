import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { Pacer } from '../../functions/send/pacing';
import { sendMessages } from '../../functions/send/sending';
import type { ValidMessage } from '../../functions/shared/mail/valid-message';
import type { Mailer, OutgoingEmail } from '../../functions/shared/mail/ports';
import { SendFailure } from '../../functions/shared/mail/ports';
import { parseEmailAddress } from '../../functions/shared/domain/email-address';
import { MemoryBudget } from '../support/memory-budget';

const message = (index: number, extra: Partial<ValidMessage> = {}): ValidMessage => ({
  index,
  from: parseEmailAddress('noreply@example.com')!,
  to: [`user${index}@example.org`],
  cc: [],
  bcc: [],
  subject: `Message ${index}`,
  text: 'Body',
  ...extra,
});

/** A clock that only moves when the code under test sleeps, so backoff is deterministic. */
function virtualClock(start = 1_000_000) {
  let now = start;
  return { now: () => now, sleep: async (ms: number) => void (now += ms), advance: (ms: number) => void (now += ms) };
}

function scriptedMailer(script: (email: OutgoingEmail, attempt: number) => Promise<string>): Mailer & { calls: OutgoingEmail[] } {
  const calls: OutgoingEmail[] = [];
  const attempts = new Map<string, number>();
  return {
    calls,
    async send(email) {
      calls.push(email);
      const attempt = (attempts.get(email.subject) ?? 0) + 1;
      attempts.set(email.subject, attempt);
      return { messageId: await script(email, attempt) };
    },
  };
}

const base = { organizationId: 'org', concurrency: 4, maxAttempts: 5 };

describe('sendMessages', () => {
  it('returns results in request order even when later messages finish first', async () => {
    const mailer = scriptedMailer(async (email) => {
      const index = Number(email.subject.split(' ')[1]);
      await new Promise((resolve) => setTimeout(resolve, (10 - index) * 3));
      return `id-${index}`;
    });
    const { results } = await sendMessages(Array.from({ length: 10 }, (_, i) => message(i)), { ...base, mailer, deadline: Date.now() + 5_000, now: Date.now });
    expect(results).toEqual(Array.from({ length: 10 }, (_, i) => ({ Index: i, Status: 'Sent', MessageId: `id-${i}` })));
  });

  it('never has more than the configured number of sends in flight', async () => {
    let inFlight = 0;
    let peak = 0;
    const mailer = scriptedMailer(async () => {
      peak = Math.max(peak, ++inFlight);
      await new Promise((resolve) => setTimeout(resolve, 5));
      inFlight--;
      return 'id';
    });
    await sendMessages(Array.from({ length: 20 }, (_, i) => message(i)), { ...base, concurrency: 3, mailer, deadline: Date.now() + 5_000, now: Date.now });
    expect(peak).toBe(3);
  });

  it('retries throttling with backoff and reports the message sent', async () => {
    const clock = virtualClock();
    const mailer = scriptedMailer(async (_email, attempt) => {
      if (attempt < 3) throw new SendFailure('Throttled');
      return 'id-after-retries';
    });
    const { results } = await sendMessages([message(0)], { ...base, mailer, deadline: clock.now() + 10_000, now: clock.now, sleep: clock.sleep });
    expect(results).toEqual([{ Index: 0, Status: 'Sent', MessageId: 'id-after-retries' }]);
    expect(mailer.calls).toHaveLength(3);
  });

  it('gives up after the attempt limit and reports Throttled, retryable', async () => {
    const clock = virtualClock();
    const mailer = scriptedMailer(async () => {
      throw new SendFailure('Throttled');
    });
    const { results } = await sendMessages([message(0)], { ...base, mailer, deadline: clock.now() + 60_000, now: clock.now, sleep: clock.sleep });
    expect(results[0]).toMatchObject({ Status: 'Failed', Error: { Code: 'Throttled', Retryable: true } });
    expect(mailer.calls).toHaveLength(5);
  });

  it('does not call SES when the in-flight checkpoint write took it past the deadline, and records why', async () => {
    const clock = virtualClock();
    const mailer = scriptedMailer(async () => 'too-late');
    const recorded: unknown[] = [];
    const { results } = await sendMessages([message(0)], {
      ...base,
      mailer,
      deadline: clock.now() + 1_000,
      now: clock.now,
      sleep: clock.sleep,
      beforeSend: async () => clock.advance(1_500), // a slow checkpoint write
      onResult: (result) => void recorded.push(result),
    });
    expect(mailer.calls).toHaveLength(0);
    expect(results[0]).toMatchObject({ Status: 'Failed', Error: { Code: 'DeadlineExceeded', Retryable: true } });
    expect(recorded).toEqual(results);
  });

  describe('SES throttling with a pacer whose rate is unknown (GetAccount failed, or the endpoint cannot say)', () => {
    afterEach(() => {
      jest.restoreAllMocks();
    });

    /** A pacer on a virtual clock whose quota never says a rate, and a mailer that records when it was called. */
    function unknownRate(throttledCalls: number) {
      const clock = virtualClock();
      const pacer = new Pacer({ budget: new MemoryBudget(), quota: { maxSendRate: async () => undefined }, now: clock.now, sleep: clock.sleep });
      const at: number[] = [];
      const mailer = scriptedMailer(async (_email, attempt) => {
        at.push(clock.now());
        if (attempt <= throttledCalls) throw new SendFailure('Throttled');
        return 'id';
      });
      return { clock, pacer, mailer, at };
    }

    it('backs off exponentially between tries, as from any transient fault, instead of retrying at once', async () => {
      jest.spyOn(Math, 'random').mockReturnValue(1); // the full jitter at its top: each delay is base × 2^(n−1)
      const { clock, pacer, mailer, at } = unknownRate(3);
      const start = clock.now();
      const { results } = await sendMessages([message(0)], { ...base, pacer, mailer, deadline: start + 10_000, now: clock.now, sleep: clock.sleep });
      expect(results).toEqual([{ Index: 0, Status: 'Sent', MessageId: 'id' }]);
      expect(at.map((t) => t - start)).toEqual([0, 50, 150, 350]);
    });

    it('with a rate known, retries at the new turn the budget gives, with no backoff on top', async () => {
      jest.spyOn(Math, 'random').mockReturnValue(1);
      const clock = virtualClock();
      const pacer = new Pacer({ budget: new MemoryBudget(), quota: { maxSendRate: async () => 10 }, now: clock.now, sleep: clock.sleep });
      const at: number[] = [];
      const mailer = scriptedMailer(async (_email, attempt) => {
        at.push(clock.now());
        if (attempt === 1) throw new SendFailure('Throttled');
        return 'id';
      });
      const start = clock.now();
      const { results } = await sendMessages([message(0)], { ...base, pacer, mailer, deadline: start + 10_000, now: clock.now, sleep: clock.sleep });
      expect(results).toEqual([{ Index: 0, Status: 'Sent', MessageId: 'id' }]);
      // The account's burst still had room: the new turn is at once (a backoff would have made it 50 ms).
      expect(at.map((t) => t - start)).toEqual([0, 0]);
    });

    it('gives up, Throttled and retryable, when the next backoff would pass the deadline', async () => {
      jest.spyOn(Math, 'random').mockReturnValue(1);
      const { clock, pacer, mailer, at } = unknownRate(5);
      const start = clock.now();
      const { results } = await sendMessages([message(0)], { ...base, pacer, mailer, deadline: start + 700, now: clock.now, sleep: clock.sleep });
      expect(results[0]).toMatchObject({ Status: 'Failed', Error: { Code: 'Throttled', Retryable: true } });
      // 0, 50 and 150 fit before the last send at 200 ms (the deadline less the call's allowance); 350 does not.
      expect(at.map((t) => t - start)).toEqual([0, 50, 150]);
    });
  });

  it('stops retrying when the backoff would pass the deadline', async () => {
    const clock = virtualClock();
    const mailer = scriptedMailer(async () => {
      clock.advance(400);
      throw new SendFailure('Throttled');
    });
    const { results } = await sendMessages([message(0)], { ...base, mailer, deadline: clock.now() + 500, now: clock.now, sleep: clock.sleep });
    expect(results[0]).toMatchObject({ Status: 'Failed', Error: { Code: 'Throttled', Retryable: true } });
    expect(mailer.calls.length).toBeLessThanOrEqual(2);
  });

  it('does not retry permanent failures or unknown outcomes', async () => {
    for (const code of ['MessageRejected', 'OutcomeUnknown', 'QuotaExceeded', 'AccountSuspended'] as const) {
      const mailer = scriptedMailer(async () => {
        throw new SendFailure(code);
      });
      const [result] = (await sendMessages([message(0)], { ...base, mailer, deadline: Date.now() + 5_000, now: Date.now })).results;
      expect(result).toMatchObject({ Status: 'Failed', Error: { Code: code } });
      expect(mailer.calls).toHaveLength(1);
    }
  });

  it('reports messages it had no time to attempt as DeadlineExceeded, retryable, without sending them', async () => {
    const clock = virtualClock();
    const mailer = scriptedMailer(async () => {
      clock.advance(600);
      return 'id';
    });
    const { results } = await sendMessages([message(0), message(1), message(2)], { ...base, concurrency: 1, mailer, deadline: clock.now() + 1_000, now: clock.now });
    expect(results.map((r) => r.Status)).toEqual(['Sent', 'Sent', 'Failed']);
    expect(results[2]).toMatchObject({ Error: { Code: 'DeadlineExceeded', Retryable: true } });
    expect(mailer.calls).toHaveLength(2);
  });

  it('checks expiry when the message turn comes, not when the request arrived', async () => {
    const clock = virtualClock(Date.UTC(2030, 0, 1));
    const mailer = scriptedMailer(async () => {
      clock.advance(2_000);
      return 'id';
    });
    const expiresAt = clock.now() + 1_000;
    const { results } = await sendMessages([message(0), message(1, { expiresAt })], { ...base, concurrency: 1, mailer, deadline: clock.now() + 10_000, now: clock.now });
    expect(results.map((r) => r.Status)).toEqual(['Sent', 'Expired']);
    expect(mailer.calls).toHaveLength(1);
  });

  it('passes the message through with addresses as validated', async () => {
    const mailer = scriptedMailer(async () => 'id');
    await sendMessages([message(0, { displayName: 'Acme', cc: ['c@example.org'], html: '<p>x</p>' })], { ...base, mailer, deadline: Date.now() + 1_000, now: Date.now });
    expect(mailer.calls[0]).toEqual({
      organizationId: 'org',
      from: 'noreply@example.com',
      displayName: 'Acme',
      to: ['user0@example.org'],
      cc: ['c@example.org'],
      bcc: [],
      subject: 'Message 0',
      text: 'Body',
      html: '<p>x</p>',
    });
  });

  it('reports each result as soon as it is known', async () => {
    const seen: number[] = [];
    const mailer = scriptedMailer(async () => 'id');
    await sendMessages([message(0), message(1)], { ...base, mailer, deadline: Date.now() + 1_000, now: Date.now, onResult: (r) => void seen.push(r.Index) });
    expect(seen.sort()).toEqual([0, 1]);
  });
});
