import {
  AccountSuspendedException,
  BadRequestException,
  GetAccountCommand,
  LimitExceededException,
  MailFromDomainNotVerifiedException,
  MessageRejected,
  NotFoundException,
  SendEmailCommand,
  SendingPausedException,
  SESv2ServiceException,
  TooManyRequestsException,
} from '@aws-sdk/client-sesv2';
import type { SESv2Client } from '@aws-sdk/client-sesv2';
import { networkFailure } from '../runtime/network-errors';
import type { FailureCode, Mailer, OutgoingEmail, SendQuota, SendReceipt } from './ports';
import { SendFailure } from './ports';
import { toSendEmailRequest } from './ses-message';
import { tenantNameOf } from './tenants';

/** The HTTP status SES (or whatever answered) gave, when the SDK knows it. */
function answeredStatus(error: unknown): number | undefined {
  const status = (error as { $metadata?: { httpStatusCode?: unknown } } | null)?.$metadata?.httpStatusCode;
  return typeof status === 'number' ? status : undefined;
}

/**
 * SES refuses a message whose identities it has not verified with `MessageRejected` and the text
 * "Email address is not verified. The following identities failed the check in region
 * US-EAST-1: Name <a@example.com>, a@example.com". In the sandbox the unverified identities may
 * be recipients, which is no fault of the sender identity: so the sender is at fault only when
 * the From address, or its domain, is among the identities named.
 */
export function senderNotVerified(message: string, from: string): boolean {
  if (!/\bnot verified\b/i.test(message)) return false;
  const address = from.toLowerCase();
  const domain = address.slice(address.lastIndexOf('@') + 1);
  const named = message.slice(message.lastIndexOf(':') + 1).toLowerCase();
  const identities = named.split(/[\s,<>]+/).filter(Boolean);
  return identities.includes(address) || identities.includes(domain);
}

/**
 * Classifies an error from SendEmail of a message from `from`. A connection that was never made
 * is safe to retry; an answer lost after the request went out (reset, timeout, abort) may mean
 * SES took the message, so that one is `OutcomeUnknown` and is never retried.
 */
export function classifySesError(error: unknown, from = ''): FailureCode {
  if (error instanceof TooManyRequestsException) return 'Throttled';
  if (error instanceof LimitExceededException) return 'QuotaExceeded';
  if (error instanceof MessageRejected) return from && senderNotVerified(error.message, from) ? 'SenderNotVerified' : 'MessageRejected';
  if (error instanceof MailFromDomainNotVerifiedException) return 'MailFromDomainNotVerified';
  if (error instanceof SendingPausedException) return 'SendingPaused';
  if (error instanceof AccountSuspendedException) return 'AccountSuspended';
  if (error instanceof NotFoundException) return 'NotFound';
  if (error instanceof BadRequestException) return 'BadRequest';
  if (error instanceof SESv2ServiceException) {
    if (error.name === 'ThrottlingException') return 'Throttled';
    return error.$fault === 'server' ? 'SesUnavailable' : 'SendFailed';
  }
  // An answer whose body could not be read (a proxy's page, a cut-off answer): a 2xx may mean
  // the message was accepted, so it is never retried or called "not sent"; a 5xx did not send.
  const status = answeredStatus(error);
  if (status !== undefined && status >= 200 && status < 300) return 'OutcomeUnknown';
  if (status !== undefined && status >= 500) return 'SesUnavailable';
  const network = networkFailure(error);
  if (network === 'not-connected') return 'SesUnavailable';
  if (network === 'answer-lost') return 'OutcomeUnknown';
  return 'SendFailed';
}

/** Sends through Amazon SES v2 and reports failures as `SendFailure` with a stable code. */
export class SesMailer implements Mailer, SendQuota {
  constructor(
    private readonly client: SESv2Client,
    private readonly configurationSetName?: string,
    /** Name each Organization's SES tenant on every message (SES_TENANTS). */
    private readonly tenants = false,
  ) {}

  async send(email: OutgoingEmail, signal?: AbortSignal): Promise<SendReceipt> {
    try {
      const input = await toSendEmailRequest(email, this.configurationSetName);
      const result = await this.client.send(new SendEmailCommand(this.tenants ? { ...input, TenantName: tenantNameOf(email.organizationId) } : input), {
        ...(signal && { abortSignal: signal }),
      });
      if (!result.MessageId) throw new SendFailure('OutcomeUnknown');
      return { messageId: result.MessageId };
    } catch (error) {
      if (error instanceof SendFailure) throw error;
      throw new SendFailure(classifySesError(error, email.from), { cause: error });
    }
  }

  /**
   * The account's MaxSendRate. An endpoint that answers but cannot say (an emulator without an
   * account, a client error such as a missing permission) means no known limit; a fault (network,
   * 5xx) is thrown, so the caller keeps what it knew.
   */
  async maxSendRate(signal?: AbortSignal): Promise<number | undefined> {
    try {
      const account = await this.client.send(new GetAccountCommand({}), { ...(signal && { abortSignal: signal }) });
      const rate = account.SendQuota?.MaxSendRate;
      return typeof rate === 'number' && rate > 0 ? rate : undefined;
    } catch (error) {
      if (error instanceof SESv2ServiceException && error.$fault === 'client' && classifySesError(error) !== 'Throttled') return undefined;
      throw error;
    }
  }
}
