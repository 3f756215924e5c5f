/**
 * Pacing (CONTRACT section 7): when may each message go, so that the account's send rate is spent
 * and never overrun. The rate is SES's own (`GetAccount`, re-read now and then) unless
 * `SES_MAX_SEND_RATE` sets it; the budget is shared by every request on every instance (the
 * `SendBudget` in the table). A request reserves all its recipients in one write and learns each
 * message's turn; what cannot go before the deadline is not tried at all. Throttling that still
 * happens (another sender on the account, a quota lowered under us) slows this instance's pace
 * down at once and lets it recover over a few seconds.
 *
 * One `Pacer` per function instance: it keeps the rate it read and the slow-down it learnt.
 */
import type { Pace } from '../shared/domain/send-pace';
import { nextFreeAt, paceFor, unitSendTime } from '../shared/domain/send-pace';
import type { SendQuota } from '../shared/mail/ports';
import type { SendBudget } from '../shared/store/ports';

export interface PacerOptions {
  readonly budget: SendBudget;
  readonly quota: SendQuota;
  /** `SES_MAX_SEND_RATE`: when set, SES is not asked. */
  readonly maxSendRate?: number | undefined;
  readonly now: () => number;
  /** How long a rate read from SES is trusted (quotas get raised). */
  readonly refreshMs?: number;
}

/** Each message's turn (epoch ms), or undefined for a message that cannot go before the deadline. */
export interface Plan {
  readonly sendAt: readonly (number | undefined)[];
  /** When the budget has room again, if some message did not fit. */
  readonly retryAt: number | undefined;
}

const DEFAULTS = { refreshMs: 5 * 60_000 };
/** After a failed read the rate is asked again this soon, and kept as it was meanwhile. */
const RETRY_READ_MS = 10_000;
/** Throttling despite pacing halves the pace, to no less than this share of the rate … */
const MIN_FACTOR = 0.1;
/** … and the pace climbs back to the full rate over this long without throttling. */
const RECOVERY_MS = 10_000;
/** The GetAccount call must not hold a request up for long. */
const READ_TIMEOUT_MS = 2_000;

export class Pacer {
  private readonly options: PacerOptions & typeof DEFAULTS;
  private known: { rate: number | undefined; until: number } | undefined;
  private reading: Promise<number | undefined> | undefined;
  private slowdown = { factor: 1, at: 0 };

  constructor(options: PacerOptions) {
    this.options = { ...DEFAULTS, ...options };
  }

  /** The account's rate in recipients per second; undefined when no limit is known. */
  async rate(): Promise<number | undefined> {
    if (this.options.maxSendRate !== undefined) return this.options.maxSendRate;
    const now = this.options.now();
    if (this.known && now < this.known.until) return this.known.rate;
    this.reading ??= this.read(now).finally(() => (this.reading = undefined));
    return this.reading;
  }

  /** Reserves every message's recipients (`units`, in request order) and says when each may go. */
  async plan(units: readonly number[], lastSendAt: number): Promise<Plan> {
    const now = this.options.now();
    const rate = await this.rate();
    if (rate === undefined || units.length === 0) return { sendAt: units.map(() => now), retryAt: undefined };
    const pace = this.pace(rate, now);
    const total = units.reduce((sum, n) => sum + n, 0);
    const reservation = await this.options.budget.reserve(total, pace, now, lastSendAt);
    let used = 0;
    const sendAt = units.map((n) => {
      if (used + n > reservation.units) return undefined;
      used += n;
      // A message goes at the turn of its last recipient: SES counts every recipient.
      return unitSendTime(reservation.start, used - 1, pace, now);
    });
    const fitsAll = sendAt.every((at) => at !== undefined);
    return { sendAt, retryAt: fitsAll ? undefined : nextFreeAt(reservation.start + reservation.units * pace.intervalMs, pace) };
  }

  /** SES throttled a call despite the plan: slow this instance down, and re-read the rate soon. */
  throttled(): void {
    const now = this.options.now();
    this.slowdown = { factor: Math.max(MIN_FACTOR, this.factor(now) / 2), at: now };
    if (this.known) this.known = { ...this.known, until: Math.min(this.known.until, now + RETRY_READ_MS) };
  }

  private pace(rate: number, now: number): Pace {
    return paceFor(rate * this.factor(now));
  }

  private factor(now: number): number {
    return Math.min(1, this.slowdown.factor + (now - this.slowdown.at) / RECOVERY_MS);
  }

  private async read(now: number): Promise<number | undefined> {
    try {
      const rate = await this.options.quota.maxSendRate(AbortSignal.timeout(READ_TIMEOUT_MS));
      this.known = { rate, until: now + this.options.refreshMs };
    } catch {
      // Keep what was known (nothing, on a first read) and ask again soon.
      this.known = { rate: this.known?.rate, until: now + RETRY_READ_MS };
    }
    return this.known.rate;
  }
}
