/**
 * What happened to one recipient of one message, and the one rule that keeps it from going
 * backwards (CONTRACT section 10): every state has a place in a total order, and a recorded state
 * is only ever replaced by a later one. Events arrive late, twice and out of order, so the final
 * state must not depend on the order they came in: it is the greatest of them under this order,
 * whatever the order, and a duplicate (equal, not greater) changes nothing.
 *
 * The order is: the status's rank, then the event's own time, then the event id (so that two
 * different events of the same rank at the same millisecond still have a winner). The DynamoDB
 * store enforces exactly this comparison in its condition expression.
 */

/** Per recipient, and for a whole message (plus `Unknown`, which is never stored). */
export const DELIVERY_STATUSES = ['Sent', 'Delayed', 'Delivered', 'Rejected', 'Bounced', 'Complained'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
export type MessageStatus = DeliveryStatus | 'Unknown';

/** The status's rank: a delay can follow a send, a delivery a delay, a complaint a delivery; never the reverse. */
const RANK: Record<DeliveryStatus, number> = { Sent: 1, Delayed: 2, Delivered: 3, Rejected: 4, Bounced: 5, Complained: 6 };
/** Epoch milliseconds stay below this for the next 250 years, so rank × this + time orders by rank first. */
const RANK_SPAN = 10_000_000_000_000;

export interface RecipientState {
  readonly status: DeliveryStatus;
  /** ISO 8601 time of the event that recorded it. */
  readonly at: string;
  /** Bounce type (`Permanent/General`), delay type, complaint feedback type, reject reason; null when the event says nothing more. */
  readonly detail: string | null;
  /** The event that recorded it (see ses-event.ts), the last tie-breaker. */
  readonly eventId: string;
}

/** The state's place in the order, as one number (the store compares it, then the event id). */
export function orderOf(state: Pick<RecipientState, 'status' | 'at'>): number {
  const time = Date.parse(state.at);
  return RANK[state.status] * RANK_SPAN + (Number.isFinite(time) ? time : 0);
}

/** True when `next` may replace `current` (nothing recorded yet, or `next` is later in the order). */
export function supersedes(next: RecipientState, current: RecipientState | undefined): boolean {
  if (!current) return true;
  const [a, b] = [orderOf(next), orderOf(current)];
  return a > b || (a === b && next.eventId > current.eventId);
}

/**
 * A message's status from its recipients': a problem with any recipient wins (a complaint, then a
 * bounce, then a rejection); otherwise the least advanced recipient says where the message is.
 */
export function messageStatus(recipients: readonly Pick<RecipientState, 'status'>[]): MessageStatus {
  if (recipients.length === 0) return 'Unknown';
  const has = (status: DeliveryStatus) => recipients.some((recipient) => recipient.status === status);
  for (const problem of ['Complained', 'Bounced', 'Rejected'] as const) if (has(problem)) return problem;
  if (recipients.every((recipient) => recipient.status === 'Delivered')) return 'Delivered';
  return has('Delayed') ? 'Delayed' : 'Sent';
}
