import type { TemplateReference } from '../templates/template-rules';
import type { Tracking } from './tracking';

/** A file sent with a message (CONTRACT section 12); with a content id it is inline. */
export interface OutgoingAttachment {
  readonly fileName: string;
  /** Standard base64, already checked; decoded only on the way to SES. */
  readonly content: string;
  /** `type/subtype`, given or derived from the file name. */
  readonly contentType: string;
  /** Referenced as `cid:<contentId>` from the HTML body; makes the attachment inline. */
  readonly contentId?: string;
}

/** A custom header field, as the client wrote it (encoded for the wire by the mailer). */
export interface CustomHeader {
  readonly name: string;
  readonly value: string;
}

/** One validated message, ready to go: addresses already ASCII, domains already Punycode. */
export interface OutgoingEmail {
  readonly organizationId: string;
  readonly from: string;
  readonly displayName?: string;
  readonly to: readonly string[];
  readonly cc: readonly string[];
  readonly bcc: readonly string[];
  readonly subject: string;
  readonly text?: string;
  readonly html?: string;
  readonly replyTo?: readonly string[];
  readonly headers?: readonly CustomHeader[];
  /** The client's own message tags (the service adds its own beside them). */
  readonly tags?: Readonly<Record<string, string>>;
  readonly attachments?: readonly OutgoingAttachment[];
  /** The template version it was rendered from (CONTRACT section 14): sent as service tags, told in its status and webhooks. */
  readonly template?: TemplateReference;
  /** Its open and click tracking, resolved when it was accepted (CONTRACT section 17); absent: untracked. */
  readonly tracking?: Tracking;
  /** The schedule it is sent for, at its time (CONTRACT section 13): sent as a service tag, named in its webhooks. */
  readonly scheduleId?: string;
}

export interface SendReceipt {
  /** The Amazon SES message id. */
  readonly messageId: string;
}

export interface Mailer {
  send(email: OutgoingEmail, signal?: AbortSignal): Promise<SendReceipt>;
}

/** What the account may send: SES's `GetAccount` → `SendQuota.MaxSendRate`. */
export interface SendQuota {
  /** Recipients per second; undefined when the endpoint cannot say (no limit is then known). */
  maxSendRate(signal?: AbortSignal): Promise<number | undefined>;
}

/**
 * Stable failure codes reported to clients. Never raw SDK text: the code and a fixed message.
 * `throttling` codes make a request 429 when nothing was sent; `retry` codes are retried inside
 * the request while time remains.
 */
export const FAILURE_CODES = {
  Throttled: { retryable: true, throttling: true, retry: true, message: 'Amazon SES is throttling sends; retry later.' },
  QuotaExceeded: { retryable: true, throttling: true, retry: false, message: 'The Amazon SES sending quota is used up; retry after it resets.' },
  SesUnavailable: { retryable: true, throttling: false, retry: true, message: 'Amazon SES could not be reached or failed internally.' },
  DeadlineExceeded: { retryable: true, throttling: false, retry: false, message: 'The request ran out of time before this message could be sent.' },
  MessageRejected: { retryable: false, throttling: false, retry: false, message: 'Amazon SES rejected the message (for example an unverified address in the SES sandbox).' },
  MailFromDomainNotVerified: { retryable: false, throttling: false, retry: false, message: 'The custom MAIL FROM domain of the sender identity is not verified in Amazon SES.' },
  SendingPaused: { retryable: false, throttling: false, retry: false, message: 'Sending is paused for this account, configuration set or Organization tenant in Amazon SES.' },
  AccountSuspended: { retryable: false, throttling: false, retry: false, message: 'The Amazon SES account is suspended from sending.' },
  NotFound: { retryable: false, throttling: false, retry: false, message: 'A resource Amazon SES needs (such as the configuration set) does not exist.' },
  BadRequest: { retryable: false, throttling: false, retry: false, message: 'Amazon SES refused the request as malformed.' },
  StorageUnavailable: { retryable: true, throttling: false, retry: false, message: 'The service could not record the message before handing it to Amazon SES, so it was not sent.' },
  OutcomeUnknown: { retryable: false, throttling: false, retry: false, message: 'The message was handed to Amazon SES but its answer was lost; it may have been sent, so it is not retried.' },
  SendFailed: { retryable: false, throttling: false, retry: false, message: 'Amazon SES did not accept the message.' },
  Suppressed: { retryable: false, throttling: false, retry: false, message: 'Every recipient is on the Organization\'s suppression list (a permanent bounce or a complaint), so the message was not sent.' },
  SenderNotVerified: { retryable: false, throttling: false, retry: false, message: 'The sender identity (the From domain or address) is not verified in Amazon SES, so the message was not sent.' },
  // Scheduled sends (CONTRACT section 13): the first when scheduling, the others when its time came.
  ScheduleUnavailable: { retryable: true, throttling: false, retry: false, message: 'The message could not be scheduled (the table or the scheduler did not answer), so it was neither scheduled nor sent.' },
  OrganizationForbidden: { retryable: false, throttling: false, retry: false, message: 'When its time came, the user who scheduled the message was no longer a member of the Organization, so it was not sent.' },
  SenderForbidden: { retryable: false, throttling: false, retry: false, message: 'When its time came, the message\'s From was no longer an allowed sender identity of the Organization, or not one of the senders the key that scheduled it is limited to, so it was not sent.' },
  OrganizationPaused: { retryable: true, throttling: false, retry: false, message: 'When its time came, the Organization was paused for its bounce or complaint rate; the message waits for it to be resumed (at most 48 hours after its time), and was not sent.' },
} as const;

export type FailureCode = keyof typeof FAILURE_CODES;

/** A message could not be sent; carries the client-facing code. */
export class SendFailure extends Error {
  readonly code: FailureCode;

  constructor(code: FailureCode, options?: ErrorOptions) {
    super(FAILURE_CODES[code].message, options);
    this.name = 'SendFailure';
    this.code = code;
  }

  get retryable(): boolean {
    return FAILURE_CODES[this.code].retryable;
  }
}
