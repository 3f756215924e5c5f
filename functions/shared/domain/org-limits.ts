/**
 * What the operator may set per Organization (CONTRACT section 11, item 2): a rate (recipients per
 * second), a daily quota (recipients per UTC day) and a weight in the account's fair share. Kept
 * as one `limits` map on the Organization item, which the send path reads anyway; read here
 * defensively, so a hand-edited or corrupt value means "not set", never a refused send.
 */

export interface OrganizationLimits {
  /** Recipients per second; unset: no rate of its own (the fair share still applies). */
  readonly rate?: number;
  /** Recipients per UTC day; unset: no daily quota. */
  readonly daily?: number;
  /** Its weight in the fair share of the account's rate; 1 unless set. */
  readonly weight: number;
  /** Scheduled messages it may hold not yet sent (CONTRACT section 11 item 7); unset: `DEFAULT_SCHEDULED`. */
  readonly scheduled?: number;
}

/**
 * Pending scheduled messages an Organization may hold unless the operator says otherwise: every
 * schedule more than 15 minutes ahead is an EventBridge Scheduler schedule, and the account's
 * quota of those is shared by every Organization.
 */
export const DEFAULT_SCHEDULED = 10_000;

export const DEFAULT_LIMITS: OrganizationLimits = { weight: 1 };

/** Bounds the admin command line accepts (and the reader keeps). */
export const LIMIT_BOUNDS = {
  rate: { min: 0.1, max: 100_000 },
  daily: { min: 1, max: 1_000_000_000 },
  weight: { min: 0.01, max: 1_000 },
  scheduled: { min: 1, max: 1_000_000 },
} as const;

const within = (value: unknown, { min, max }: { min: number; max: number }): value is number =>
  typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max;

/** The limits as stored on the Organization item (the `limits` attribute), made safe. */
export function readLimits(value: unknown): OrganizationLimits {
  const raw = value && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  const rate = Number(raw.rate);
  const daily = Number(raw.daily);
  const weight = Number(raw.weight);
  const scheduled = Number(raw.scheduled);
  return {
    weight: within(weight, LIMIT_BOUNDS.weight) ? weight : 1,
    ...(within(rate, LIMIT_BOUNDS.rate) && { rate }),
    ...(within(daily, LIMIT_BOUNDS.daily) && { daily: Math.floor(daily) }),
    ...(within(scheduled, LIMIT_BOUNDS.scheduled) && { scheduled: Math.floor(scheduled) }),
  };
}

/** The UTC day an instant falls on, `YYYY-MM-DD`: the daily quota's period. */
export function utcDay(now: number): string {
  return new Date(now).toISOString().slice(0, 10);
}

/** Epoch ms of the next UTC midnight: when the daily quota resets. */
export function nextUtcMidnight(now: number): number {
  const day = new Date(now);
  return Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate() + 1);
}
