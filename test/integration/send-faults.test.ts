/**
 * Faults the emulators cannot produce, injected at the SDK client (aws-sdk-client-mock) or by
 * stopping DynamoDB: SES throttling, rejection, outage; storage failure. The rest of the path is
 * the real handler and the real DynamoDB adapter.
 *
 * The mocks take one client instance each, never the class: the harness's own SES and DynamoDB
 * clients stay real, so "sends nothing" is read from the SES emulator the real mailer would reach.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
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
import type { Mailer } from '../../functions/shared/mail/ports';
import { SendFailure } from '../../functions/shared/mail/ports';
import { SesMailer } from '../../functions/shared/mail/ses-mailer';
import { DynamoDbAccessStore } from '../../functions/shared/store/dynamodb-access-store';
import type { Harness, Tenant } from '../support/harness';
import { authorised, message, sendBody, useHarness } from '../support/harness';

let h!: Harness;
let tenant!: Tenant;
/** Nothing listens there: a call the mock did not take fails rather than reaching anything. */
const NOWHERE = 'http://127.0.0.1:9';
const sesClient = new SESv2Client({ region: 'us-east-1', endpoint: NOWHERE, maxAttempts: 1 });
const sesMock = mockClient(sesClient);

useHarness((harness, first) => {
  h = harness;
  tenant = first;
});
afterEach(() => {
  sesMock.reset();
});

const meta = { $metadata: {} };
const throttled = () => new TooManyRequestsException({ message: 'Maximum sending rate exceeded.', ...meta });
const rejected = () => new MessageRejected({ message: 'Email address is not verified.', ...meta });
const mockedMailer = () => ({ mailer: new SesMailer(sesClient) });

describe('SES faults', () => {
  it('answers 207 when some messages are sent and others rejected', async () => {
    sesMock
      .on(SendEmailCommand)
      .resolvesOnce({ MessageId: 'ok-0' })
      .rejectsOnce(rejected())
      .resolvesOnce({ MessageId: 'ok-2' });
    const overrides = { ...mockedMailer(), config: { ...h.config, sendConcurrency: 1 } };
    const result = await h.invoke({ headers: authorised(tenant), body: sendBody(tenant, [message(), message(), message()]) }, overrides);
    expect(result.statusCode).toBe(207);
    expect(result.body.Messages).toEqual([
      { Index: 0, Status: 'Sent', MessageId: 'ok-0' },
      { Index: 1, Status: 'Failed', Error: { Code: 'MessageRejected', Message: expect.any(String), Retryable: false } },
      { Index: 2, Status: 'Sent', MessageId: 'ok-2' },
    ]);
    expect(result.rawBody).not.toContain('not verified');
  });

  it('retries throttling inside the request and succeeds', async () => {
    sesMock.on(SendEmailCommand).rejectsOnce(throttled()).rejectsOnce(throttled()).resolves({ MessageId: 'after-throttle' });
    const result = await h.invoke({ headers: authorised(tenant), body: sendBody(tenant) }, mockedMailer());
    expect(result.statusCode).toBe(200);
    expect(result.body.Messages[0]).toEqual({ Index: 0, Status: 'Sent', MessageId: 'after-throttle' });
    expect(sesMock.commandCalls(SendEmailCommand)).toHaveLength(3);
  });

  it('answers 429 with Retry-After when throttling outlasts the retries and nothing was sent', async () => {
    sesMock.on(SendEmailCommand).rejects(throttled());
    const result = await h.invoke({ headers: authorised(tenant), body: sendBody(tenant, [message(), message()]) }, mockedMailer());
    expect(result.statusCode).toBe(429);
    expect(Number(result.headers['Retry-After'])).toBeGreaterThan(0);
    expect(result.body.Messages.every((m: any) => m.Status === 'Failed' && m.Error.Code === 'Throttled' && m.Error.Retryable)).toBe(true);
  });

  it('answers 422 with the results when nothing was sent and SES refused the message itself', async () => {
    sesMock.on(SendEmailCommand).rejectsOnce(throttled()).rejects(rejected());
    const overrides = { ...mockedMailer(), config: { ...h.config, sendConcurrency: 1 } };
    const result = await h.invoke({ headers: authorised(tenant), body: sendBody(tenant, [message({ Subject: 'a' })]) }, overrides);
    expect(result.statusCode).toBe(422);
    expect(result.headers['Content-Type']).toBe('application/json');
    expect(result.headers['Retry-After']).toBeUndefined();
    expect(result.body.Messages[0].Error.Code).toBe('MessageRejected');
  });

  it('answers 502 when nothing was sent and SES, not the request, is at fault for one of them', async () => {
    sesMock.on(SendEmailCommand).rejectsOnce(rejected()).rejects(new SendingPausedException({ message: 'x', ...meta }));
    const overrides = { ...mockedMailer(), config: { ...h.config, sendConcurrency: 1 } };
    const result = await h.invoke({ headers: authorised(tenant), body: sendBody(tenant, [message({ Subject: 'a' }), message({ Subject: 'b' })]) }, overrides);
    expect(result.statusCode).toBe(502);
    expect(result.body.Messages.map((m: any) => m.Error.Code)).toEqual(['MessageRejected', 'SendingPaused']);
  });

  it('reports messages it ran out of time for as retryable, never drops them', async () => {
    // The first message is answered at once; the second's answer never comes, so the deadline
    // passes while it is in flight, however fast or slow this machine is.
    let calls = 0;
    const mailer: Mailer = {
      send: async (_email, signal) => {
        calls += 1;
        if (calls === 1) return { messageId: 'first' };
        await new Promise((resolve) => signal?.addEventListener('abort', resolve, { once: true }));
        throw new SendFailure('OutcomeUnknown');
      },
    };
    const overrides = { mailer, config: { ...h.config, sendConcurrency: 1 } };
    // 1.5 s of margin is kept back, so 3.5 s of Lambda time leaves 2 s for sending.
    const result = await h.invoke({ headers: authorised(tenant), body: sendBody(tenant, Array.from({ length: 5 }, () => message())) }, overrides, 3_500);
    expect(result.statusCode).toBe(207);
    expect(calls).toBe(2);
    const [first, inFlight, ...untried] = result.body.Messages;
    expect(first).toEqual({ Index: 0, Status: 'Sent', MessageId: 'first' });
    // Handed to SES without an answer: maybe sent, so not retryable; the rest were never tried, and are.
    expect(inFlight).toMatchObject({ Index: 1, Status: 'Failed', Error: { Code: 'OutcomeUnknown', Retryable: false } });
    expect(untried).toHaveLength(3);
    for (const failure of untried) expect(failure).toMatchObject({ Status: 'Failed', Error: { Retryable: true } });
  });
});

describe('every SES SendEmail exception, through the handler', () => {
  it.each([
    ['TooManyRequestsException', 'Throttled', true, 429, 5, () => throttled()],
    ['LimitExceededException', 'QuotaExceeded', true, 429, 1, () => new LimitExceededException({ message: 'Daily message quota exceeded.', ...meta })],
    ['SendingPausedException', 'SendingPaused', false, 502, 1, () => new SendingPausedException({ message: 'x', ...meta })],
    ['AccountSuspendedException', 'AccountSuspended', false, 502, 1, () => new AccountSuspendedException({ message: 'x', ...meta })],
    ['MailFromDomainNotVerifiedException', 'MailFromDomainNotVerified', false, 502, 1, () => new MailFromDomainNotVerifiedException({ message: 'x', ...meta })],
    ['MessageRejected', 'MessageRejected', false, 422, 1, () => rejected()],
    ['BadRequestException', 'BadRequest', false, 502, 1, () => new BadRequestException({ message: 'x', ...meta })],
    ['NotFoundException', 'NotFound', false, 502, 1, () => new NotFoundException({ message: 'Configuration set does not exist.', ...meta })],
    ['an SES 5xx', 'SesUnavailable', true, 502, 5, () => new SESv2ServiceException({ name: 'InternalFailure', $fault: 'server', message: 'x', ...meta })],
    ['a lost connection', 'OutcomeUnknown', false, 502, 1, () => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })],
  ])('maps %s to %s (retryable %p), status %p, after %p attempt(s)', async (_name, code, retryable, status, attempts, error) => {
    sesMock.on(SendEmailCommand).rejects(error());
    const result = await h.invoke({ headers: authorised(tenant), body: sendBody(tenant) }, mockedMailer());
    expect(result.statusCode).toBe(status);
    expect(result.body.Messages).toEqual([{ Index: 0, Status: 'Failed', Error: { Code: code, Message: expect.any(String), Retryable: retryable } }]);
    expect(sesMock.commandCalls(SendEmailCommand)).toHaveLength(attempts);
    if (status === 429) expect(Number(result.headers['Retry-After'])).toBeGreaterThan(0);
  });
});

/** A DynamoDB client of its own for a mock to take; unmocked calls fail (nothing listens there). */
const brokenDocuments = () => DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1', endpoint: NOWHERE, maxAttempts: 1 }));

describe('storage faults', () => {
  it('answers 503 with Retry-After when DynamoDB fails, and sends nothing', async () => {
    const documents = brokenDocuments();
    const ddbMock = mockClient(documents);
    ddbMock.on(BatchGetCommand).rejects(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
    try {
      const access = new DynamoDbAccessStore(documents, h.config.tableName);
      await h.clearEmails();
      const result = await h.invoke({ headers: authorised(tenant), body: sendBody(tenant) }, { access });
      expect(result.statusCode).toBe(503);
      expect(result.headers['Retry-After']).toBe('5');
      expect(result.headers['Content-Type']).toBe('application/problem+json');
      expect(await h.sentEmails()).toHaveLength(0);
      // The control: the same harness, with its storage answering, does put a message in the emulator's store.
      expect((await h.invoke({ headers: authorised(tenant), body: sendBody(tenant) })).statusCode).toBe(200);
      expect(await h.sentEmails()).toHaveLength(1);
    } finally {
      ddbMock.restore();
    }
  });

  it('answers 503, not 401 or 403, when DynamoDB keeps keys unprocessed', async () => {
    const documents = brokenDocuments();
    const ddbMock = mockClient(documents);
    ddbMock.on(BatchGetCommand).callsFake(async (input: any) => ({ Responses: {}, UnprocessedKeys: input.RequestItems }));
    try {
      const access = new DynamoDbAccessStore(documents, h.config.tableName);
      const result = await h.invoke({ headers: authorised(tenant), body: sendBody(tenant) }, { access });
      expect(result.statusCode).toBe(503);
    } finally {
      ddbMock.restore();
    }
  });

  it('answers 500 with a request id and nothing of the fault for an unexpected error', async () => {
    const access = { lookup: async () => Promise.reject(new TypeError('secret internal detail at /var/task/index.js:1:2')), recordUse: async () => undefined };
    const result = await h.invoke({ headers: authorised(tenant), body: sendBody(tenant) }, { access });
    expect(result.statusCode).toBe(500);
    expect(result.headers['Content-Type']).toBe('application/problem+json');
    expect(result.body).toEqual({
      type: expect.stringContaining('/problems/internal'),
      title: 'Internal error',
      status: 500,
      detail: expect.any(String),
      requestId: expect.any(String),
    });
    expect(result.rawBody).not.toContain('secret internal detail');
  });
});
