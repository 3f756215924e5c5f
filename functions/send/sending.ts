/**
 * Sending (CONTRACT section 7): the messages of a request go to the mailer concurrently through
 * a bounded pool, each at the turn the pacer gave it within the account's send rate; each is
 * checked for expiry when its turn comes. A message whose turn would come after the deadline is
 * reported `Failed: Throttled` without being tried. Throttling that still happens is retried at a
 * new turn (after a backoff too when no rate is known), and transient SES faults with exponential
 * backoff and full jitter, while the deadline allows. Nothing is silently dropped.
 */
import type { FailureCode, Mailer, OutgoingEmail } from '../shared/mail/ports';
import { FAILURE_CODES, SendFailure } from '../shared/mail/ports';
import { mapWithConcurrency } from '../shared/runtime/pool';
import { hasExpired } from './expiry';
import type { MessageTurn, Pacer, Sharer } from './pacing';
import type { ValidMessage } from '../shared/mail/valid-message';

/** `Suppressed`: recipients left out because the Organization's suppression list holds them. */
export type MessageResult = (
  | { readonly Index: number; readonly Status: 'Sent'; readonly MessageId: string }
  | { readonly Index: number; readonly Status: 'Expired' }
  /** Waiting for its `SendAt` (CONTRACT section 13; functions/send/scheduling.ts). */
  | { readonly Index: number; readonly Status: 'Scheduled'; readonly ScheduleId: string }
  | {
      readonly Index: number;
      readonly Status: 'Failed';
      readonly Error: { readonly Code: FailureCode; readonly Message: string; readonly Retryable: boolean };
    }
) & { readonly Suppressed?: readonly string[] };

export interface SendOptions {
  readonly organizationId: string;
  /** The Organization's weight and rate limit in the account's fair share (CONTRACT section 11). */
  readonly sharer?: Sharer;
  readonly mailer: Mailer;
  readonly concurrency: number;
  /** Epoch milliseconds by which every attempt must have finished. */
  readonly deadline: number;
  /** Spends the account's send rate; without one, every message goes at once. */
  readonly pacer?: Pacer;
  readonly now: () => number;
  readonly maxAttempts?: number;
  readonly backoffBaseMs?: number;
  readonly backoffCapMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
  /** Called once, just before a message is first handed to the mailer; if it fails, the message is not sent. */
  readonly beforeSend?: (message: ValidMessage) => Promise<void>;
  /** Called with each message's result as soon as it is known (checkpoints, metrics). */
  readonly onResult?: (result: MessageResult) => void | Promise<void>;
}

/** What a request's sending came to: one result per message, and when to retry what did not fit. */
export interface SendOutcome {
  readonly results: MessageResult[];
  /** Epoch ms when the send-rate budget has room again, if some message did not get a turn. */
  readonly retryAt: number | undefined;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Time kept for the SES call itself: the last turn a message may get is this long before the deadline. */
const CALL_ALLOWANCE_MS = 500;

// The account's rate and the Organization's own (`org limits --rate`) both end here: the wording covers either.
const NO_TURN = 'No turn of the send rate (the account\'s, shared with other Organizations, or this Organization\'s own limit) is free before this request\'s deadline, so this message was not tried; retry after Retry-After.';

export function failed(index: number, code: FailureCode, message: string = FAILURE_CODES[code].message): MessageResult {
  return { Index: index, Status: 'Failed', Error: { Code: code, Message: message, Retryable: FAILURE_CODES[code].retryable } };
}

/** The result, naming the message's suppressed recipients when it had any. */
export function withSuppressed(result: MessageResult, suppressed: readonly string[] | undefined): MessageResult {
  return suppressed && suppressed.length > 0 ? { ...result, Suppressed: suppressed } : result;
}

/** Recipients of a message, as SES counts them against the send rate. */
export function recipientsOf(message: ValidMessage): number {
  return message.to.length + message.cc.length + message.bcc.length;
}

async function sendOne(message: ValidMessage, turn: number, options: SendOptions, retryAt: (at: number) => void): Promise<MessageResult> {
  const { mailer, now, deadline } = options;
  const maxAttempts = options.maxAttempts ?? 5;
  const base = options.backoffBaseMs ?? 50;
  const cap = options.backoffCapMs ?? 2_000;
  const sleep = options.sleep ?? defaultSleep;

  const { index: _index, from, expiresAt: _expiresAt, sendAt: _sendAt, suppressed: _suppressed, trackingChoice: _choice, ...content } = message;
  const email: OutgoingEmail = { ...content, organizationId: options.organizationId, from: from.ascii };

  if (turn > now()) await sleep(turn - now());
  for (let attempt = 1; ; attempt++) {
    if (hasExpired(message.expiresAt, now())) return { Index: message.index, Status: 'Expired' };
    if (deadline - now() <= 0) return failed(message.index, 'DeadlineExceeded');
    if (attempt === 1 && options.beforeSend) {
      try {
        await options.beforeSend(message);
      } catch {
        return failed(message.index, 'StorageUnavailable');
      }
    }
    // Measured after the checkpoint write, which can be slow: a call must never start after the
    // deadline (it would outlive the invocation, and locally the idempotency lock). The message
    // is then reported, and its checkpoint recorded, as not sent.
    const remaining = deadline - now();
    if (remaining <= 0) return failed(message.index, 'DeadlineExceeded');
    // An answer that has not come by the deadline is abandoned (and reported OutcomeUnknown).
    const signal = AbortSignal.timeout(Math.ceil(remaining));
    try {
      const { messageId } = await mailer.send(email, signal);
      return { Index: message.index, Status: 'Sent', MessageId: messageId };
    } catch (error) {
      const code = error instanceof SendFailure ? error.code : 'SendFailed';
      const delay = Math.random() * Math.min(cap, base * 2 ** (attempt - 1));
      if (code === 'Throttled' && options.pacer && attempt < maxAttempts) {
        // SES throttled despite the plan: slow down, and try again at a new turn of the budget.
        options.pacer.throttled();
        const lastSendAt = deadline - CALL_ALLOWANCE_MS;
        // With no account rate known (GetAccount failed, or the endpoint cannot say) the budget
        // gives the new turn at once and cannot slow down: back off as from any transient fault.
        const notBefore = (await options.pacer.pace()) === undefined ? now() + delay : 0;
        if (notBefore > lastSendAt) return failed(message.index, code);
        const again = options.pacer.begin(sharerOf(options), [{ units: recipientsOf(message), expiresAt: message.expiresAt }], lastSendAt);
        const next = await again.turn(0).catch(() => 'storage' as const);
        if (next === 'expired') return { Index: message.index, Status: 'Expired' };
        if (typeof next !== 'number') {
          if (again.retryAt !== undefined) retryAt(again.retryAt);
          return failed(message.index, code);
        }
        const at = Math.max(next, notBefore);
        if (at > now()) await sleep(at - now());
        continue;
      }
      const canRetry = FAILURE_CODES[code].retry && attempt < maxAttempts && now() + delay < deadline;
      if (!canRetry) return failed(message.index, code);
      await sleep(delay);
    }
  }
}

function sharerOf(options: SendOptions): Sharer {
  return options.sharer ?? { organizationId: options.organizationId, weight: 1 };
}

/** Results that leave a booked turn unused: the message never reached SES. */
const UNUSED = new Set<FailureCode>(['Throttled', 'DeadlineExceeded', 'StorageUnavailable']);

/** Sends every message and returns one result per message, in request order. */
export async function sendMessages(messages: readonly ValidMessage[], options: SendOptions): Promise<SendOutcome> {
  // Already expired: reported at once, and they book nothing of the send rate.
  const live = messages.filter((message) => !hasExpired(message.expiresAt, options.now()));
  const booking = options.pacer?.begin(
    sharerOf(options),
    live.map((message) => ({ units: recipientsOf(message), expiresAt: message.expiresAt })),
    options.deadline - CALL_ALLOWANCE_MS,
  );
  // The first round is booked before anything is sent: a budget that cannot be reached fails the request.
  await booking?.turn(0);
  let retryAt: number | undefined;
  const later = (at: number) => (retryAt = Math.max(retryAt ?? at, at));
  const sent = await mapWithConcurrency(live, options.concurrency, async (message, i) => {
    const turn = booking ? await booking.turn(i) : options.now();
    const result = withSuppressed(await resultAt(turn, message, options, later), message.suppressed);
    await options.onResult?.(result);
    return result;
  });
  if (booking?.retryAt !== undefined) later(booking.retryAt);
  await booking?.finish((i) => {
    const result = sent[i]!;
    return result.Status === 'Expired' || (result.Status === 'Failed' && UNUSED.has(result.Error.Code));
  });
  const byIndex = new Map(sent.map((result) => [result.Index, result]));
  const results: MessageResult[] = [];
  for (const message of messages) {
    const known = byIndex.get(message.index);
    if (known) results.push(known);
    else {
      const expired = withSuppressed({ Index: message.index, Status: 'Expired' }, message.suppressed);
      await options.onResult?.(expired);
      results.push(expired);
    }
  }
  return { results, retryAt };
}

async function resultAt(turn: MessageTurn, message: ValidMessage, options: SendOptions, later: (at: number) => void): Promise<MessageResult> {
  if (turn === 'expired') return { Index: message.index, Status: 'Expired' };
  if (turn === 'none') return failed(message.index, 'Throttled', NO_TURN);
  if (turn === 'storage') return failed(message.index, 'StorageUnavailable');
  return sendOne(message, turn, options, later);
}
