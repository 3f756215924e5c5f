/**
 * An Organization's sending reputation from its own delivery events (CONTRACT section 11 item 3):
 * the hard-bounce rate and the complaint rate over a rolling window of 7 UTC days, and the rule
 * that pauses it.
 *
 * What is counted is recipients, as SES counts them: a `Send` event adds its recipients to the
 * sends, a permanent `Bounce` its bounced recipients to the hard bounces, a `Complaint` its
 * complaining recipients to the complaints. The counts are kept per UTC day, so "the last 7 days"
 * is today and the 6 days before it: a day's counts leave the window as a whole at midnight UTC.
 * That keeps the store to a handful of counters per Organization, updated with one atomic ADD per
 * event and read in one item, never a scan of messages.
 *
 * An Organization is judged only once it has sent `minSends` in the window (a handful of bounces
 * out of 10 messages says little), and is paused when either rate is at or above its threshold.
 * SES itself reviews an account at 5 % bounces and 0.1 % complaints: the defaults below.
 */
import type { DeliveryEvent } from '../delivery/ses-event';

export interface ReputationThresholds {
  /** Hard bounces / sends at or above which the Organization is paused (0.05 = 5 %). */
  readonly bounceRate: number;
  /** Complaints / sends at or above which it is paused (0.001 = 0.1 %). */
  readonly complaintRate: number;
  /** Sends in the window below which nobody is judged. */
  readonly minSends: number;
}

export const WINDOW_DAYS = 7;
const DAY_MS = 24 * 60 * 60 * 1_000;

export type CounterKind = 'sends' | 'bounces' | 'complaints';
export const COUNTER_KINDS: readonly CounterKind[] = ['sends', 'bounces', 'complaints'];

/** The counters of one UTC day. */
export type DayCounts = Readonly<Record<CounterKind, number>>;

/** What an Organization's window holds, and its rates (0 while nothing was sent). */
export interface Reputation {
  readonly windowDays: number;
  readonly sends: number;
  readonly hardBounces: number;
  readonly complaints: number;
  readonly bounceRate: number;
  readonly complaintRate: number;
}

/** A pause as recorded on the Organization item: since when, and why, in words. */
export interface Pause {
  /** ISO 8601. */
  readonly at: string;
  readonly reason: string;
}

/** `YYYY-MM-DD` (UTC) of an epoch-milliseconds time. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The days of the window ending today, newest first. */
export function windowDays(now: number): string[] {
  return Array.from({ length: WINDOW_DAYS }, (_, i) => utcDay(now - i * DAY_MS));
}

/** The week of days just before the window: counters the store may drop (they can no longer count). */
export function daysBeforeWindow(now: number): string[] {
  return Array.from({ length: WINDOW_DAYS }, (_, i) => utcDay(now - (WINDOW_DAYS + i) * DAY_MS));
}

/** Amazon SES's mailbox simulator: mail to it is left out of the account's rates. */
export const SIMULATOR_DOMAIN = 'simulator.amazonses.com';

export function isSimulatorAddress(address: string): boolean {
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase() === SIMULATOR_DOMAIN;
}

/** What one event adds to which counters, in recipients. */
export type Tally = Partial<Record<CounterKind, number>>;

/**
 * What one event adds, if anything. Mail to the mailbox simulator never counts as a send that
 * dilutes the rates (CONTRACT section 11 item 6; security audit round 3, finding 6): SES leaves
 * it out of the account's rates, so 40 sends to `success@simulator.amazonses.com` must not make
 * an Organization's real bounces look like 5 %. Its `Send` events add nothing; a simulator
 * recipient that bounces or complains counts as a send and a bounce (or complaint) at once, so a
 * simulated bounce weighs like a real one and the local stack can still show a pause.
 */
export function tallyOf(event: Pick<DeliveryEvent, 'type' | 'recipients' | 'suppress'>): Tally | undefined {
  const count = event.recipients.length;
  const simulated = event.recipients.filter((recipient) => isSimulatorAddress(recipient.address)).length;
  const withSimulated = (tally: Tally): Tally => (simulated > 0 ? { ...tally, sends: simulated } : tally);
  if (count === 0) return undefined;
  if (event.type === 'Send') return count > simulated ? { sends: count - simulated } : undefined;
  // A permanent bounce is the one the service suppresses; a transient one is not a hard bounce.
  if (event.type === 'Bounce' && event.suppress?.reason === 'Bounce') return withSimulated({ bounces: count });
  if (event.type === 'Complaint') return withSimulated({ complaints: count });
  return undefined;
}

/** The window's totals and rates, from the counters of each day (days outside the window ignored). */
export function summarise(countsOf: (day: string) => Partial<DayCounts> | undefined, now: number): Reputation {
  const total = { sends: 0, bounces: 0, complaints: 0 };
  for (const day of windowDays(now)) {
    const counts = countsOf(day);
    for (const kind of COUNTER_KINDS) total[kind] += Math.max(0, Number(counts?.[kind] ?? 0) || 0);
  }
  const rate = (n: number) => (total.sends > 0 ? n / total.sends : 0);
  return {
    windowDays: WINDOW_DAYS,
    sends: total.sends,
    hardBounces: total.bounces,
    complaints: total.complaints,
    bounceRate: rate(total.bounces),
    complaintRate: rate(total.complaints),
  };
}

const percent = (rate: number): string => `${Number((rate * 100).toFixed(3))} %`;

/** Why this Organization must be paused, in words; undefined when it may send on. */
export function judge(reputation: Reputation, thresholds: ReputationThresholds): string | undefined {
  if (reputation.sends < thresholds.minSends) return undefined;
  const window = `in the last ${reputation.windowDays} days`;
  if (reputation.bounceRate >= thresholds.bounceRate) {
    return `hard-bounce rate ${percent(reputation.bounceRate)} (${reputation.hardBounces} of ${reputation.sends} recipients ${window}) is at or above ${percent(thresholds.bounceRate)}`;
  }
  if (reputation.complaintRate >= thresholds.complaintRate) {
    return `complaint rate ${percent(reputation.complaintRate)} (${reputation.complaints} of ${reputation.sends} recipients ${window}) is at or above ${percent(thresholds.complaintRate)}`;
  }
  return undefined;
}

/** The reason recorded when Amazon SES refused a send because it paused the Organization's tenant. */
export const TENANT_PAUSED_REASON = 'Amazon SES paused the Organization\'s tenant (its own reputation findings)';

/** The reputation as the settings API (openapi.json `Reputation`) and `org show --json` show it. */
export function reputationView(reputation: Reputation, pause: Pause | undefined) {
  return {
    Sends: reputation.sends,
    HardBounces: reputation.hardBounces,
    Complaints: reputation.complaints,
    BounceRate: reputation.bounceRate,
    ComplaintRate: reputation.complaintRate,
    Paused: pause !== undefined,
    PausedAt: pause?.at ?? null,
    PausedReason: pause?.reason ?? null,
  };
}
