/**
 * The handler at the account's send rate (CONTRACT section 7), against dynalite and the SES
 * emulator: what fits before the deadline is sent, the rest is Throttled without being tried, and
 * throttling that still happens is retried at a new turn. What SES received always equals what
 * the API reported `Sent`.
 */
import { beforeEach, describe, expect, it, jest } from '@jest/globals';
import { SendEmailCommand, SESv2Client, TooManyRequestsException } from '@aws-sdk/client-sesv2';
import { mockClient } from 'aws-sdk-client-mock';
import { Pacer } from '../../functions/send/pacing';
import { SesMailer } from '../../functions/shared/mail/ses-mailer';
import { createDynamoDbClient } from '../../functions/shared/runtime/clients';
import { DynamoDbSendBudget } from '../../functions/shared/store/dynamodb-send-budget';
import type { Harness, Tenant } from '../support/harness';
import { authorised, message, sendBody, useHarness } from '../support/harness';

let h!: Harness;
let tenant!: Tenant;

useHarness(
  (harness, first) => {
    h = harness;
    tenant = first;
  },
  { env: { SES_MAX_SEND_RATE: '10' } },
);

/** A pacer of its own per test, on a budget of its own, so tests do not book each other's turns. */
function freshPacer(): Pacer {
  return new Pacer({
    budget: new DynamoDbSendBudget(createDynamoDbClient(h.config), `${h.config.tableName}`),
    quota: { maxSendRate: async () => undefined },
    maxSendRate: 10,
    now: Date.now,
  });
}

const many = (n: number) => Array.from({ length: n }, (_, i) => message({ To: [`r${i}@example.org`], Subject: `paced ${i}` }));

beforeEach(async () => {
  await h.clearEmails();
  // Let the shared budget run idle between tests: nothing booked from now on.
  await new Promise((resolve) => setTimeout(resolve, 2_100));
});

describe('sending at the account rate', () => {
  it('sends what fits before the deadline and reports the rest Throttled, untried, with Retry-After', async () => {
    // 3 s left: the deadline is 1.5 s away, the last turn 1 s away: 9 at once, then 10 more.
    const result = await h.invoke({ headers: authorised(tenant), body: sendBody(tenant, many(40)) }, { pacer: freshPacer() }, 3_000);
    const statuses = result.body.Messages.map((m: { Status: string }) => m.Status);
    const sent = statuses.filter((s: string) => s === 'Sent').length;
    expect(result.statusCode).toBe(207);
    // Bounds a busy machine cannot break: the burst is granted at once, whatever the clock says,
    // and the rate allows no more than the burst and one second's worth before the last turn. How
    // close to 19 it comes is a matter of speed, which the benchmark measures.
    expect(sent).toBeGreaterThanOrEqual(9);
    expect(sent).toBeLessThanOrEqual(19);
    // The untried ones are the last ones, in request order, each saying why.
    expect(statuses.slice(0, sent).every((s: string) => s === 'Sent')).toBe(true);
    for (const failed of result.body.Messages.slice(sent)) {
      expect(failed).toMatchObject({ Status: 'Failed', Error: { Code: 'Throttled', Retryable: true, Message: expect.stringContaining('not tried') } });
    }
    expect(Number(result.headers['Retry-After'])).toBeGreaterThanOrEqual(1);
    expect(Number(result.headers['Retry-After'])).toBeLessThanOrEqual(3);
    // Nothing lost, nothing doubled: SES has exactly the messages reported Sent.
    const received = (await h.sentEmails()).map((email) => email.subject).sort();
    expect(received).toEqual(result.body.Messages.filter((m: { Status: string }) => m.Status === 'Sent').map((m: { Index: number }) => `paced ${m.Index}`).sort());
  }, 20_000);

  it('answers 429 with Retry-After when the budget is booked past the deadline, and tries nothing', async () => {
    const pacer = freshPacer();
    // Another Organization (on any instance) has booked the horizon: the next 2 s of the account's rate.
    await pacer.begin({ organizationId: 'another-organization', weight: 1 }, Array.from({ length: 60 }, () => ({ units: 1 })), Date.now() + 60_000).turn(0);
    // With 1 s to go before this request's last turn, none of its messages can have one.
    const result = await h.invoke({ headers: authorised(tenant), body: sendBody(tenant, many(5)) }, { pacer }, 3_000);
    expect(result.statusCode).toBe(429);
    expect(result.body.Messages.every((m: { Error?: { Code: string } }) => m.Error?.Code === 'Throttled')).toBe(true);
    // Room again when the booked turns are used: 2 s less the burst allowance, rounded up.
    expect(Number(result.headers['Retry-After'])).toBeGreaterThanOrEqual(1);
    expect(Number(result.headers['Retry-After'])).toBeLessThanOrEqual(2);
    expect(await h.sentEmails()).toHaveLength(0);
  }, 20_000);

  it('retries a call SES throttled anyway at a new turn, and slows its pace down', async () => {
    const sesMock = mockClient(SESv2Client);
    try {
      sesMock
        .on(SendEmailCommand)
        .rejectsOnce(new TooManyRequestsException({ message: 'Maximum sending rate exceeded.', $metadata: {} }))
        .resolves({ MessageId: 'paced-after-throttle' });
      const pacer = freshPacer();
      const slowed = jest.spyOn(pacer, 'throttled');
      const mailer = new SesMailer(new SESv2Client({ region: 'us-east-1' }));
      const result = await h.invoke({ headers: authorised(tenant), body: sendBody(tenant, many(3)) }, { pacer, mailer, config: { ...h.config, sendConcurrency: 1 } });
      expect(result.statusCode).toBe(200);
      expect(result.body.Messages.map((m: { Status: string }) => m.Status)).toEqual(['Sent', 'Sent', 'Sent']);
      expect(slowed).toHaveBeenCalledTimes(1);
      expect(sesMock.commandCalls(SendEmailCommand)).toHaveLength(4);
    } finally {
      sesMock.restore();
    }
  }, 20_000);
});
