/**
 * Sender identities as Amazon SES identities (CONTRACT section 16 item 2), as the admin CLI
 * manages them: `sender add` creates the domain (or address) identity when SES does not have it
 * (`CreateEmailIdentity`; a domain gets Easy DKIM, SES's default), sets its custom MAIL FROM
 * domain when asked (`PutEmailIdentityMailFromAttributes`), and answers the DNS records to publish;
 * `sender list` reads each identity's verification and DKIM status (`GetEmailIdentity`).
 *
 * In AWS (a deployed table) every call is made; locally nothing is called: the local stack's
 * SES sends from any identity, so each counts as verified at once, and the records are printed
 * as they would be needed, with the DKIM tokens SES would choose left as placeholders.
 */
import {
  CreateEmailIdentityCommand,
  GetEmailIdentityCommand,
  NotFoundException,
  PutEmailIdentityMailFromAttributesCommand,
} from '@aws-sdk/client-sesv2';
import type { SESv2Client } from '@aws-sdk/client-sesv2';
import { InvalidArgumentError } from '../../functions/shared/store/records';
import { toAsciiDomain } from '../../functions/shared/domain/email-address';

/** One DNS record to publish for an identity. */
export interface DnsRecord {
  readonly name: string;
  readonly type: 'CNAME' | 'MX' | 'TXT';
  readonly value: string;
}

/** What SES says of an identity: may it send, and how far its verification and DKIM are. */
export interface IdentityStatus {
  readonly identity: string;
  /** SES's VerifiedForSendingStatus: mail from it is accepted. */
  readonly verified: boolean;
  /** PENDING, SUCCESS, FAILED, TEMPORARY_FAILURE or NOT_STARTED; `NOT_FOUND` when SES has no such identity. */
  readonly verificationStatus: string;
  readonly dkimStatus: string | null;
}

/** What `sender add` did in SES and what the operator publishes. */
export interface AddedIdentity extends IdentityStatus {
  /** True when this call created the identity in SES. */
  readonly created: boolean;
  readonly records: readonly DnsRecord[];
}

/** Amazon SES refused an identity call; the message names the call and the identity. */
export class IdentityError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'IdentityError';
  }
}

const isDomain = (identity: string) => !identity.includes('@');
const domainOf = (identity: string) => identity.slice(identity.lastIndexOf('@') + 1);
const NOT_FOUND: Omit<IdentityStatus, 'identity'> = { verified: false, verificationStatus: 'NOT_FOUND', dkimStatus: null };

/** A MAIL FROM domain must be a subdomain of the identity's domain (SES's rule). */
function checkMailFrom(identity: string, mailFrom: string | undefined): string | undefined {
  if (mailFrom === undefined) return undefined;
  // An internationalised name becomes Punycode, as the identity's own domain did.
  const domain = toAsciiDomain(mailFrom.trim().replace(/\.$/, '')) ?? mailFrom.trim().toLowerCase();
  if (!isDomain(identity)) throw new InvalidArgumentError('--mail-from goes with --domain: a MAIL FROM domain belongs to a domain identity');
  if (!domain.endsWith(`.${identity}`) || !/^[a-z0-9.-]+$/.test(domain)) throw new InvalidArgumentError(`--mail-from must be a subdomain of ${identity}, such as bounce.${identity}; got "${mailFrom}"`);
  return domain;
}

function dkimRecords(domain: string, tokens: readonly string[]): DnsRecord[] {
  return tokens.map((token) => ({ name: `${token}._domainkey.${domain}`, type: 'CNAME', value: `${token}.dkim.amazonses.com` }));
}

function mailFromRecords(mailFrom: string, region: string): DnsRecord[] {
  return [
    { name: mailFrom, type: 'MX', value: `10 feedback-smtp.${region}.amazonses.com` },
    { name: mailFrom, type: 'TXT', value: '"v=spf1 include:amazonses.com ~all"' },
  ];
}

/** The identities of one target: in SES (`client`), or the local stack's (undefined). */
export class SesIdentities {
  constructor(
    private readonly client: SESv2Client | undefined,
    /** Locally, the region the MAIL FROM MX names (in AWS, the client's: SES's feedback endpoint of the region that sends). */
    private readonly localRegion: string,
  ) {}

  get local(): boolean {
    return this.client === undefined;
  }

  /** The identity in SES, created when missing; with `mailFrom`, its custom MAIL FROM domain set. */
  async ensure(identity: string, mailFrom?: string): Promise<AddedIdentity> {
    const from = checkMailFrom(identity, mailFrom);
    const mailFromDns = from ? mailFromRecords(from, this.client ? await this.client.config.region() : this.localRegion) : [];
    if (!this.client) {
      const dkim = isDomain(identity) ? dkimRecords(identity, ['<token1>', '<token2>', '<token3>']) : [];
      return { identity, created: false, verified: true, verificationStatus: 'SUCCESS', dkimStatus: isDomain(identity) ? 'SUCCESS' : null, records: [...dkim, ...mailFromDns] };
    }
    const client = this.client;
    let created = false;
    // An address at a domain SES already has needs no identity of its own.
    let answer = (await this.read(identity)) ?? (isDomain(identity) ? undefined : await this.read(domainOf(identity)));
    if (!answer) {
      // No DkimSigningAttributes: Easy DKIM, SES makes and rotates the keys. An address identity gets SES's verification e-mail.
      await this.call('CreateEmailIdentity', identity, () => client.send(new CreateEmailIdentityCommand({ EmailIdentity: identity })));
      created = true;
      answer = await this.read(identity);
    }
    if (from) {
      const input = { EmailIdentity: identity, MailFromDomain: from, BehaviorOnMxFailure: 'USE_DEFAULT_VALUE' } as const;
      await this.call('PutEmailIdentityMailFromAttributes', identity, () => client.send(new PutEmailIdentityMailFromAttributesCommand(input)));
    }
    const status = this.statusOf(identity, answer);
    return { ...status, created, records: [...(isDomain(identity) ? dkimRecords(identity, answer?.DkimAttributes?.Tokens ?? []) : []), ...mailFromDns] };
  }

  /** SES's verification and DKIM status of the identity (locally: verified). */
  async status(identity: string): Promise<IdentityStatus> {
    if (!this.client) return { identity, verified: true, verificationStatus: 'SUCCESS', dkimStatus: isDomain(identity) ? 'SUCCESS' : null };
    // An address is sent from under its own identity or, without one, its domain's.
    return this.statusOf(identity, (await this.read(identity)) ?? (isDomain(identity) ? undefined : await this.read(domainOf(identity))));
  }

  private statusOf(identity: string, answer: Awaited<ReturnType<SesIdentities['read']>>): IdentityStatus {
    if (!answer) return { identity, ...NOT_FOUND };
    return {
      identity,
      verified: answer.VerifiedForSendingStatus === true,
      verificationStatus: answer.VerificationStatus ?? (answer.VerifiedForSendingStatus ? 'SUCCESS' : 'PENDING'),
      dkimStatus: answer.DkimAttributes?.Status ?? null,
    };
  }

  /** The identity as SES answers GetEmailIdentity, or undefined when SES has none. */
  private async read(identity: string) {
    const client = this.client!;
    try {
      return await this.call('GetEmailIdentity', identity, () => client.send(new GetEmailIdentityCommand({ EmailIdentity: identity })));
    } catch (error) {
      if (error instanceof IdentityError && error.cause instanceof NotFoundException) return undefined;
      throw error;
    }
  }

  private async call<T>(what: string, identity: string, send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (error) {
      const { name = 'Error', message = String(error) } = error as { name?: string; message?: string };
      throw new IdentityError(`Amazon SES refused ${what} for ${identity} (${name}: ${message.split('\n')[0]})`, { cause: error });
    }
  }
}
