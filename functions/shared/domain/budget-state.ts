/**
 * The shared send-rate budget's state as stored (one item; see fair-share.ts for what it means):
 * the account's TAT and an entry per Organization with turns ahead or mail waiting, and how a
 * state read from the table is made safe before anyone books against it.
 */
import type { Pace } from './send-pace';

/** How far ahead of now a booking may reach. */
export const HORIZON_MS = 2_000;
/** At most this many Organization entries are kept: the item, read and written every round, stays small. */
const MAX_ENTRIES = 1_000;

/** Turns booked in one round: `units` recipients spread over [from, to]. */
export interface Holding {
  readonly from: number;
  readonly to: number;
  readonly units: number;
}

/** One Organization's part of the shared state. */
export interface OrgEntry {
  readonly weight: number;
  /** Its own rate limit (recipients per second), if the operator set one. */
  readonly cap?: number;
  /** Until when it counts as having mail waiting (its share is kept for it). */
  readonly activeUntil: number;
  /** Its turns still ahead. */
  readonly held: readonly Holding[];
  /** Its own TAT, used only when the account's rate is unknown and its cap alone paces it. */
  readonly tat?: number;
}

export interface BudgetState {
  /** The account's theoretical arrival time (epoch ms) of the next recipient; 0 when idle. */
  readonly tat: number;
  readonly orgs: Readonly<Record<string, OrgEntry>>;
}

export const EMPTY_STATE: BudgetState = { tat: 0, orgs: {} };

const finite = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

/**
 * The state as read, made safe: anything not a number, or further ahead than a booking can ever
 * reach (an instance whose clock runs ahead, a hand edit), counts as idle rather than as a reason
 * to refuse every request until it passes.
 */
export function sanitize(raw: unknown, now: number, pace: Pace | undefined, maxEntries = MAX_ENTRIES): BudgetState {
  const input = (raw ?? {}) as { tat?: unknown; orgs?: unknown };
  // The furthest a booking can reach: the horizon, the burst allowance and one 50-recipient
  // message at the slowest rate the service accepts (0.1/s), plus a minute of clock skew.
  const limit = now + HORIZON_MS + 60_000 + (pace ? pace.toleranceMs + 50 * pace.intervalMs : 500_000);
  const tat = finite(input.tat) && input.tat <= limit ? input.tat : 0;
  const orgs: Record<string, OrgEntry> = {};
  const entries = input.orgs && typeof input.orgs === 'object' ? Object.entries(input.orgs as Record<string, unknown>) : [];
  for (const [id, value] of entries) {
    const entry = readEntry(value, now, limit);
    if (entry) orgs[id] = entry;
  }
  return { tat, orgs: newest(orgs, maxEntries, now) };
}

function readEntry(value: unknown, now: number, limit: number): OrgEntry | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const raw = value as Record<string, unknown>;
  const held = (Array.isArray(raw.held) ? raw.held : [])
    .map((h) => (Array.isArray(h) ? { from: h[0], to: h[1], units: h[2] } : h) as Record<string, unknown>)
    .filter((h): h is Holding & Record<string, unknown> => !!h && finite(h.from) && finite(h.to) && finite(h.units) && h.units > 0 && h.to >= h.from)
    .filter((h) => h.to >= now && h.to <= limit)
    .map(({ from, to, units }) => ({ from, to, units }));
  const activeUntil = finite(raw.activeUntil) && raw.activeUntil <= limit ? raw.activeUntil : 0;
  const tat = finite(raw.tat) && raw.tat <= limit ? raw.tat : undefined;
  // An own-rate TAT still ahead is what keeps the cap between rounds: the entry stays while it is.
  if (held.length === 0 && activeUntil < now && !(tat !== undefined && tat > now)) return undefined;
  const weight = finite(raw.weight) && raw.weight > 0 ? raw.weight : 1;
  const cap = finite(raw.cap) && raw.cap > 0 ? raw.cap : undefined;
  return { weight, activeUntil, held, ...(cap !== undefined && { cap }), ...(tat !== undefined && { tat }) };
}

/**
 * Keeps the item bounded: the entries waiting longest are the ones kept. An entry whose own-rate
 * schedule is still ahead is always kept: dropping it would hand that Organization a fresh burst,
 * and its own rate is a hard cap.
 */
function newest(orgs: Record<string, OrgEntry>, maxEntries: number, now: number): Record<string, OrgEntry> {
  const ids = Object.keys(orgs);
  if (ids.length <= maxEntries) return orgs;
  const scheduled = ids.filter((id) => (orgs[id]!.tat ?? 0) > now);
  const others = ids.filter((id) => !((orgs[id]!.tat ?? 0) > now));
  const kept = [...scheduled, ...others.sort((a, b) => orgs[b]!.activeUntil - orgs[a]!.activeUntil).slice(0, Math.max(0, maxEntries - scheduled.length))];
  return Object.fromEntries(kept.map((id) => [id, orgs[id]!]));
}
