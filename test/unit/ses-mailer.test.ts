import { afterEach, describe, expect, it } from '@jest/globals';
import {
  AccountSuspendedException,
  BadRequestException,
  LimitExceededException,
  MailFromDomainNotVerifiedException,
  MessageRejected,
  NotFoundException,
  SendEmailCommand,
  SendingPausedException,
  SESv2Client,
  SESv2ServiceException,
  TooManyRequestsException,
} from '@aws-sdk/client-sesv2';
import { mockClient } from 'aws-sdk-client-mock';
import libmime from 'libmime';
import { SendFailure } from '../../functions/shared/mail/ports';
import { formatFromAddress, toSendEmailInput } from '../../functions/shared/mail/ses-message';
import { SesMailer } from '../../functions/shared/mail/ses-mailer';

const ses = mockClient(SESv2Client);
afterEach(() => {
  ses.reset();
});

const email = {
  organizationId: '5f0c7c2e-8d1c-4a55-9a8e-0c3f5e2b9a10',
  from: 'noreply@example.com',
  to: ['a@example.org'],
  cc: [],
  bcc: ['b@example.org'],
  subject: 'Hi',
  text: 'Body',
};

const meta = { $metadata: {} };

describe('SesMailer', () => {
  it('returns the SES message id and sends the mapped request', async () => {
    ses.on(SendEmailCommand).resolves({ MessageId: '0100018c-abc' });
    const receipt = await new SesMailer(new SESv2Client({ region: 'us-east-1' }), 'transactional').send(email);
    expect(receipt).toEqual({ messageId: '0100018c-abc' });
    const input = ses.commandCalls(SendEmailCommand)[0]!.args[0].input;
    expect(input).toEqual({
      FromEmailAddress: 'noreply@example.com',
      Destination: { ToAddresses: ['a@example.org'], BccAddresses: ['b@example.org'] },
      Content: { Simple: { Subject: { Data: 'Hi', Charset: 'UTF-8' }, Body: { Text: { Data: 'Body', Charset: 'UTF-8' } } } },
      EmailTags: [{ Name: 'OrganizationId', Value: email.organizationId }],
      ConfigurationSetName: 'transactional',
    });
  });

  it.each([
    ['TooManyRequestsException', new TooManyRequestsException({ message: 'SDK-DETAIL-7f3a', ...meta }), 'Throttled', true],
    ['LimitExceededException', new LimitExceededException({ message: 'SDK-DETAIL-7f3a', ...meta }), 'QuotaExceeded', true],
    ['MessageRejected', new MessageRejected({ message: 'SDK-DETAIL-7f3a', ...meta }), 'MessageRejected', false],
    ['MailFromDomainNotVerifiedException', new MailFromDomainNotVerifiedException({ message: 'SDK-DETAIL-7f3a', ...meta }), 'MailFromDomainNotVerified', false],
    ['SendingPausedException', new SendingPausedException({ message: 'SDK-DETAIL-7f3a', ...meta }), 'SendingPaused', false],
    ['AccountSuspendedException', new AccountSuspendedException({ message: 'SDK-DETAIL-7f3a', ...meta }), 'AccountSuspended', false],
    ['NotFoundException', new NotFoundException({ message: 'SDK-DETAIL-7f3a', ...meta }), 'NotFound', false],
    ['BadRequestException', new BadRequestException({ message: 'SDK-DETAIL-7f3a', ...meta }), 'BadRequest', false],
    [
      'a 5xx service error',
      new SESv2ServiceException({ name: 'InternalFailure', $fault: 'server', message: 'SDK-DETAIL-7f3a', ...meta }),
      'SesUnavailable',
      true,
    ],
    ['a refused connection', Object.assign(new Error('SDK-DETAIL-7f3a connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), 'SesUnavailable', true],
    ['a reset connection (answer lost)', Object.assign(new Error('SDK-DETAIL-7f3a socket hang up'), { code: 'ECONNRESET' }), 'OutcomeUnknown', false],
    ['an aborted request (answer lost)', Object.assign(new Error('SDK-DETAIL-7f3a aborted'), { name: 'AbortError' }), 'OutcomeUnknown', false],
    ['something unexpected', new Error('SDK-DETAIL-7f3a'), 'SendFailed', false],
  ])('reports %s as %s (retryable: %p) without the SDK text', async (_label, error, code, retryable) => {
    ses.on(SendEmailCommand).rejects(error);
    const failure = await new SesMailer(new SESv2Client({ region: 'us-east-1' })).send(email).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(SendFailure);
    expect((failure as SendFailure).code).toBe(code);
    expect((failure as SendFailure).retryable).toBe(retryable);
    expect((failure as SendFailure).message).not.toContain('SDK-DETAIL');
  });

  it.each([
    ['the From address', 'SenderNotVerified', 'Email address is not verified. The following identities failed the check in region US-EAST-1: Acme <noreply@example.com>, noreply@example.com'],
    ['the From domain', 'SenderNotVerified', 'Email address is not verified. The following identities failed the check in region EU-WEST-1: Example.com'],
    ['only a recipient (the SES sandbox)', 'MessageRejected', 'Email address is not verified. The following identities failed the check in region US-EAST-1: a@example.org'],
    ['a list cut short without the sender', 'MessageRejected', 'Email address is not verified. The following identities failed the check in region US-EAST-1: a@example.org, b@example.org...'],
    ['the sender for another reason', 'MessageRejected', 'Message rejected for noreply@example.com: content'],
  ])('reports a refusal naming %s as %s, not retryable', async (_label, code, message) => {
    ses.on(SendEmailCommand).rejects(new MessageRejected({ message, ...meta }));
    const failure = (await new SesMailer(new SESv2Client({ region: 'us-east-1' })).send(email).catch((e: unknown) => e)) as SendFailure;
    expect(failure).toMatchObject({ code, retryable: false });
    expect(failure.message).not.toContain('identities failed');
  });

  it('treats an answer without a message id as an unknown outcome', async () => {
    ses.on(SendEmailCommand).resolves({});
    await expect(new SesMailer(new SESv2Client({ region: 'us-east-1' })).send(email)).rejects.toMatchObject({ code: 'OutcomeUnknown' });
  });
});

describe('formatFromAddress', () => {
  it('leaves the bare address without a display name', () => {
    expect(formatFromAddress('a@example.com')).toBe('a@example.com');
    expect(formatFromAddress('a@example.com', '')).toBe('a@example.com');
  });

  it('quotes ASCII names, escaping quotes and backslashes', () => {
    expect(formatFromAddress('a@example.com', 'Acme, Inc.')).toBe('"Acme, Inc." <a@example.com>');
    expect(formatFromAddress('a@example.com', 'Say "hi" \\o/')).toBe('"Say \\"hi\\" \\\\o/" <a@example.com>');
  });

  it('encodes non-ASCII names as RFC 2047 words of at most 75 characters that decode back', () => {
    const name = 'Ünïcödé Support Team für Kunden — 日本語の名前もある長い表示名';
    const header = formatFromAddress('a@example.com', name);
    const phrase = header.replace(/ <a@example\.com>$/, '');
    for (const word of phrase.split(' ')) {
      expect(word).toMatch(/^=\?UTF-8\?B\?[A-Za-z0-9+/=]*\?=$/);
      expect(word.length).toBeLessThanOrEqual(75);
    }
    expect(libmime.decodeWords(phrase)).toBe(name);
  });
});

describe('toSendEmailInput', () => {
  it('omits empty recipient lists, absent bodies and an absent configuration set', () => {
    const input = toSendEmailInput({ ...email, bcc: [], text: undefined, html: '<p>x</p>' } as never);
    expect(input.Destination).toEqual({ ToAddresses: ['a@example.org'] });
    expect(input.Content?.Simple?.Body).toEqual({ Html: { Data: '<p>x</p>', Charset: 'UTF-8' } });
    expect(input).not.toHaveProperty('ConfigurationSetName');
  });
});
