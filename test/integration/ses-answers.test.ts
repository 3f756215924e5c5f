/**
 * SesMailer against an endpoint that answers what a broken proxy or a half-written answer would:
 * a real SES client over real HTTP, so the SDK's own parsing decides what the mailer sees.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import { SendFailure } from '../../functions/shared/mail/ports';
import { SesMailer } from '../../functions/shared/mail/ses-mailer';

let answer: { status: number; body: string; headers?: Record<string, string> } = { status: 200, body: '' };
let server: Server;
let mailer: SesMailer;
let client: SESv2Client;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  client = new SESv2Client({ region: 'us-east-1', endpoint: `http://127.0.0.1:${port}`, credentials: { accessKeyId: 'x', secretAccessKey: 'y' }, maxAttempts: 1 });
  mailer = new SesMailer(client);
});
afterAll(async () => {
  client.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const email = { organizationId: 'o', from: 'noreply@example.com', to: ['a@example.org'], cc: [], bcc: [], subject: 'Hi', text: 'Body' };
const codeOf = (error: unknown) => (error instanceof SendFailure ? error.code : `not a SendFailure: ${String(error)}`);

describe('SesMailer, on answers it cannot read', () => {
  it('reports a 200 whose body cannot be read as OutcomeUnknown: it may have been accepted, so it is never retried', async () => {
    answer = { status: 200, body: '<html>proxy page</html>' };
    const error = await mailer.send(email).catch((e: unknown) => e);
    expect(codeOf(error)).toBe('OutcomeUnknown');
    expect((error as SendFailure).retryable).toBe(false);
  });

  it('reports a 5xx with an unreadable body as SesUnavailable, retryable', async () => {
    answer = { status: 502, body: '<html>bad gateway</html>' };
    expect(codeOf(await mailer.send(email).catch((e: unknown) => e))).toBe('SesUnavailable');
  });

  it('reads the rate from GetAccount, and "no limit known" from an account it cannot read', async () => {
    answer = { status: 200, body: JSON.stringify({ SendQuota: { MaxSendRate: 14, Max24HourSend: 50000, SentLast24Hours: 0 } }) };
    expect(await mailer.maxSendRate()).toBe(14);
    answer = { status: 400, body: JSON.stringify({ message: 'Account not found' }), headers: { 'x-amzn-ErrorType': 'BadRequestException' } };
    expect(await mailer.maxSendRate()).toBeUndefined();
  });

  it('throws when GetAccount fails for a reason that may pass, so the pacer keeps the rate it knew', async () => {
    answer = { status: 503, body: '{}', headers: { 'x-amzn-ErrorType': 'InternalFailure' } };
    await expect(mailer.maxSendRate()).rejects.toBeDefined();
  });
});
