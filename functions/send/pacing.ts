/**
 * Pacing (CONTRACT sections 7 and 11): when may each message go, so that the account's send rate
 * is spent, never overrun, and shared fairly between Organizations. The rate is SES's own
 * (`GetAccount`, re-read now and then) unless `SES_MAX_SEND_RATE` sets it; the budget is shared by
 * every request on every instance (the `SendBudget` in the table, domain/fair-share.ts). A request
 * books its messages' turns in rounds as they come near (`Booking`), never far ahead of the
 * others; what cannot go before the deadline is not tried at all. Throttling that still happens
 * (another sender on the account, a quota lowered under us) slows this instance's pace down at
 * once and lets it recover over a few seconds.
 *
 * One `Pacer` per function instance: it keeps the rate it read and the slow-down it learnt.
 */
import type { MessageAsk, Release, Round } from '../shared/domain/fair-share';
import { shardCount } from '../shared/domain/budget-shards';
import type { Pace } from '../shared/domain/send-pace';
import { paceFor } from '../shared/domain/send-pace';
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
  readonly sleep?: (ms: number) => Promise<void>;
}

/** Whose turns are booked: the Organization and what the operator set for it (CONTRACT section 11). */
export interface Sharer {
  readonly organizationId: string;
  /** Its weight in the fair share (1 unless set). */
  readonly weight: number;
  /** Its own rate limit, recipients per second, if set. */
  readonly rate?: number | undefined;
}

/**
 * A message's turn: when it may go (epoch ms); `expired`: its expiry comes before its turn (it
 * books nothing); `none`: it cannot go before the deadline; `storage`: the budget could not be
 * reached after some messages of the request were already on their way.
 */
export type MessageTurn = number | 'expired' | 'none' | 'storage';

const DEFAULTS = { refreshMs: 5 * 60_000, sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)) };
/** After a failed read the rate is asked again this soon, and kept as it was meanwhile. */
const RETRY_READ_MS = 10_000;
/** Throttling despite pacing halves the pace, to no less than this share of the rate … */
const MIN_FACTOR = 0.1;
/** … and the pace climbs back to the full rate over this long without throttling. */
const RECOVERY_MS = 10_000;
/** A request waiting for turns still books once this long before its last possible turn. */
const LAST_CHANCE_MS = 300;
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

  /** Starts booking turns for these messages (recipients and expiry each, in request order). */
  begin(sharer: Sharer, messages: readonly MessageAsk[], lastSendAt: number): Booking {
    return new Booking(this, this.options, sharer, messages, lastSendAt);
  }

  /** SES throttled a call despite the plan: slow this instance down, and re-read the rate soon. */
  throttled(): void {
    const now = this.options.now();
    this.slowdown = { factor: Math.max(MIN_FACTOR, this.factor(now) / 2), at: now };
    if (this.known) this.known = { ...this.known, until: Math.min(this.known.until, now + RETRY_READ_MS) };
  }

  /** The account's pace now, slowed down by throttling if any; undefined when no rate is known. */
  async pace(): Promise<Pace | undefined> {
    const rate = await this.rate();
    return rate === undefined ? undefined : paceFor(rate * this.factor(this.options.now()));
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

/**
 * One request's turns, booked round by round as the workers sending its messages ask for them.
 * The first round is booked before anything is sent, so a budget that cannot be reached then
 * fails the request (503, nothing sent); later it only fails the messages still without a turn.
 */
export class Booking {
  private readonly turns: MessageTurn[] = [];
  private over = false;
  private nextAt = 0;
  private round: Promise<void> | undefined;
  private last: { readonly release: Omit<Release, 'unused'>; readonly first: number; readonly count: number } | undefined;
  /** When the budget has room again, if some message got no turn. */
  retryAt: number | undefined;

  constructor(
    private readonly pacer: Pacer,
    private readonly options: Required<Pick<PacerOptions, 'budget' | 'now' | 'sleep'>>,
    private readonly sharer: Sharer,
    private readonly messages: readonly MessageAsk[],
    private readonly lastSendAt: number,
  ) {}

  /** Message `i`'s turn, booking more rounds as needed. */
  async turn(i: number): Promise<MessageTurn> {
    while (i >= this.turns.length && !this.over) {
      this.round ??= this.book().finally(() => (this.round = undefined));
      await this.round;
    }
    return this.turns[i] ?? 'none';
  }

  /**
   * Gives back the last round's turns whose messages did not use them (`unused(i)`), if they are
   * still ahead; a failure to do so costs nothing but that share for at most one horizon.
   */
  async finish(unused: (i: number) => boolean): Promise<void> {
    const last = this.last;
    const now = this.options.now();
    if (!last) return;
    let units = 0;
    for (let i = last.first; i < last.first + last.count; i++) {
      const turn = this.turns[i];
      if (typeof turn === 'number' && turn > now && unused(i)) units += this.messages[i]!.units;
    }
    if (units === 0) return;
    await this.options.budget.release({ ...last.release, unused: units }, await this.pacer.pace(), now).catch(() => undefined);
  }

  private async book(): Promise<void> {
    if (this.turns.length >= this.messages.length) {
      this.over = true;
      return;
    }
    const wait = this.nextAt - this.options.now();
    if (wait > 0) await this.options.sleep(wait);
    const now = this.options.now();
    const pace = await this.pacer.pace();
    // The shard count follows the account's full rate, not a slowed pace: shards stay put.
    const rate = await this.pacer.rate();
    if (pace === undefined && this.sharer.rate === undefined) {
      // No rate known and no limit of its own: nothing to share, every message goes now.
      this.turns.push(...this.messages.slice(this.turns.length).map(() => now));
      this.over = true;
      return;
    }
    let round: Round;
    try {
      round = await this.options.budget.book({
        organizationId: this.sharer.organizationId,
        weight: this.sharer.weight,
        cap: this.sharer.rate,
        pace,
        messages: this.messages.slice(this.turns.length),
        now,
        lastSendAt: this.lastSendAt,
        shards: rate === undefined ? 1 : shardCount(rate),
      });
    } catch (error) {
      if (this.turns.length === 0) throw error;
      this.turns.push(...this.messages.slice(this.turns.length).map(() => 'storage' as const));
      this.over = true;
      return;
    }
    if (round.holding) {
      this.last = { release: { organizationId: this.sharer.organizationId, holding: round.holding, tatAfter: round.state.tat, shard: round.shard }, first: this.turns.length, count: round.turns.length };
    }
    this.turns.push(...round.turns);
    if (round.stop === 'done') this.over = true;
    else if (round.stop === 'deadline' || now + LAST_CHANCE_MS >= this.lastSendAt) {
      this.over = true;
      this.retryAt = round.at;
    } else {
      // A little jitter, so requests that wait for the same moment do not all write at once;
      // and a last round just before the deadline rather than none, since turns may free up.
      this.nextAt = Math.min(round.at + Math.random() * 50, this.lastSendAt - LAST_CHANCE_MS);
    }
  }
}
