/**
 * Sending (CONTRACT section 7): the messages of a request go to the mailer concurrently through
 * a bounded pool; each is checked for expiry when its turn comes; throttling and transient SES
 * faults are retried with exponential backoff and full jitter while the deadline allows. A
 * message that cannot be sent in time is reported `Failed`, retryable: never silently dropped.
 */
import type { FailureCode, Mailer, OutgoingEmail } from '../shared/mail/ports';
import { FAILURE_CODES, SendFailure } from '../shared/mail/ports';
import { mapWithConcurrency } from '../shared/runtime/pool';
import { hasExpired } from './expiry';
import type { ValidMessage } from './validation';

export type MessageResult =
  | { readonly Index: number; readonly Status: 'Sent'; readonly MessageId: string }
  | { readonly Index: number; readonly Status: 'Expired' }
  | {
      readonly Index: number;
      readonly Status: 'Failed';
      readonly Error: { readonly Code: FailureCode; readonly Message: string; readonly Retryable: boolean };
    };

export interface SendOptions {
  readonly organizationId: string;
  readonly mailer: Mailer;
  readonly concurrency: number;
  /** Epoch milliseconds by which every attempt must have finished. */
  readonly deadline: number;
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

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function failed(index: number, code: FailureCode): MessageResult {
  const { message, retryable } = FAILURE_CODES[code];
  return { Index: index, Status: 'Failed', Error: { Code: code, Message: message, Retryable: retryable } };
}

async function sendOne(message: ValidMessage, options: SendOptions): Promise<MessageResult> {
  const { mailer, now, deadline } = options;
  const maxAttempts = options.maxAttempts ?? 5;
  const base = options.backoffBaseMs ?? 50;
  const cap = options.backoffCapMs ?? 2_000;
  const sleep = options.sleep ?? defaultSleep;

  const { index: _index, from, expiresAt: _expiresAt, ...content } = message;
  const email: OutgoingEmail = { ...content, organizationId: options.organizationId, from: from.ascii };

  for (let attempt = 1; ; attempt++) {
    if (hasExpired(message.expiresAt, now())) return { Index: message.index, Status: 'Expired' };
    const remaining = deadline - now();
    if (remaining <= 0) return failed(message.index, 'DeadlineExceeded');
    if (attempt === 1 && options.beforeSend) {
      try {
        await options.beforeSend(message);
      } catch {
        return failed(message.index, 'StorageUnavailable');
      }
    }
    // An answer that has not come by the deadline is abandoned (and reported OutcomeUnknown).
    const signal = AbortSignal.timeout(Math.ceil(remaining));
    try {
      const { messageId } = await mailer.send(email, signal);
      return { Index: message.index, Status: 'Sent', MessageId: messageId };
    } catch (error) {
      const code = error instanceof SendFailure ? error.code : 'SendFailed';
      const delay = Math.random() * Math.min(cap, base * 2 ** (attempt - 1));
      const canRetry = FAILURE_CODES[code].retry && attempt < maxAttempts && now() + delay < deadline;
      if (!canRetry) return failed(message.index, code);
      await sleep(delay);
    }
  }
}

/** Sends every message and returns one result per message, in request order. */
export async function sendMessages(messages: readonly ValidMessage[], options: SendOptions): Promise<MessageResult[]> {
  return mapWithConcurrency(messages, options.concurrency, async (message) => {
    const result = await sendOne(message, options);
    await options.onResult?.(result);
    return result;
  });
}
