/**
 * The account's send rate on a laptop (CONTRACT section 7): with SES_MAX_SEND_RATE the local stack
 * throttles exactly as SES does, the service learns the rate from GetAccount and paces to it, and
 * two local stacks on one DynamoDB and one SES endpoint share one budget.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GetAccountCommand, SendEmailCommand, SESv2Client, TooManyRequestsException } from '@aws-sdk/client-sesv2';
import { startSesEmulator } from '../../infra/local/emulators';
import type { RateGateStats, RunningRateGate } from '../../infra/local/ses-rate-gate';
import { startRateGate } from '../../infra/local/ses-rate-gate';
import type { TestStack } from './helpers';
import { clearEmails, send, sentEmails, useTwoInstances } from './helpers';

const RATE = 10;

function messages(organizationId: string, count: number, tag: string) {
  return {
    OrganizationId: organizationId,
    Messages: Array.from({ length: count }, (_, i) => ({
      From: 'noreply@example.com',
      To: [`r${i}@example.org`],
      Subject: `${tag} ${i}`,
      TextContent: 'Paced.',
    })),
  };
}

async function gateStats(sesUrl: string): Promise<RateGateStats> {
  return (await (await fetch(`${sesUrl}/rate-limit`)).json()) as RateGateStats;
}

describe('the SES rate gate', () => {
  let emulator: Awaited<ReturnType<typeof startSesEmulator>>;
  let gate: RunningRateGate;
  let ses: SESv2Client;

  beforeAll(async () => {
    emulator = await startSesEmulator();
    gate = await startRateGate({ upstream: emulator.endpoint, maxSendRate: 2 });
    ses = new SESv2Client({ region: 'us-east-1', endpoint: gate.endpoint, maxAttempts: 1 });
  });
  afterAll(async () => {
    ses.destroy();
    await gate.close();
    await emulator.close();
  });

  const sendOne = (to: string[]) =>
    ses.send(
      new SendEmailCommand({
        FromEmailAddress: 'noreply@example.com',
        Destination: { ToAddresses: to },
        Content: { Simple: { Subject: { Data: 'gate' }, Body: { Text: { Data: 'gate' } } } },
      }),
    );

  it('answers GetAccount with the rate it enforces', async () => {
    const account = await ses.send(new GetAccountCommand({}));
    expect(account.SendQuota?.MaxSendRate).toBe(2);
  });

  it('throttles recipients above the rate exactly as SES does, and lets them through again once the rate allows', async () => {
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // a full bucket
    await sendOne(['a@example.org', 'b@example.org']); // two recipients: the whole second's budget
    const refused = await sendOne(['c@example.org']).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TooManyRequestsException);
    expect((refused as TooManyRequestsException).message).toBe('Maximum sending rate exceeded.');
    expect((refused as TooManyRequestsException).$metadata.httpStatusCode).toBe(429);
    await new Promise((resolve) => setTimeout(resolve, 550));
    await expect(sendOne(['c@example.org'])).resolves.toHaveProperty('MessageId');
    expect(gate.stats()).toMatchObject({ accepted: 2, recipients: 3, throttled: 1 });
  });

  it('takes a message to more recipients than its rate once the bucket has stood full long enough to pay for it, and empties it', async () => {
    let clock = 0;
    const wide = await startRateGate({ upstream: emulator.endpoint, maxSendRate: 2, now: () => clock });
    const client = new SESv2Client({ region: 'us-east-1', endpoint: wide.endpoint, maxAttempts: 1 });
    const to = (n: number) => Array.from({ length: n }, (_, i) => `r${i}@example.org`);
    const call = (n: number) =>
      client
        .send(new SendEmailCommand({ FromEmailAddress: 'noreply@example.com', Destination: { ToAddresses: to(n) }, Content: { Simple: { Subject: { Data: 'gate' }, Body: { Text: { Data: 'gate' } } } } }))
        .then(() => 'sent', (error: unknown) => (error instanceof TooManyRequestsException ? 'throttled' : error));
    try {
      // Five recipients at 2 a second, from a full bucket of two: 1.5 s more of rate first.
      expect(await call(5)).toBe('throttled');
      clock = 1_400;
      expect(await call(5)).toBe('throttled');
      clock = 1_500;
      expect(await call(5)).toBe('sent');
      expect(await call(1)).toBe('throttled'); // empty
      clock = 2_000;
      expect(await call(1)).toBe('sent');
      clock = 3_000; // full again, but three recipients need half a second more
      expect(await call(3)).toBe('throttled');
      clock = 3_500;
      expect(await call(3)).toBe('sent');
      expect(await call(1)).toBe('throttled');
      expect(wide.stats()).toMatchObject({ accepted: 3, recipients: 9, throttled: 5 });
    } finally {
      client.destroy();
      await wide.close();
    }
  });
});

describe('a local stack with SES_MAX_SEND_RATE', () => {
  // The rate is the gate's; the service is not told it and must learn it from GetAccount. The
  // second instance is of the same deployment: the same table and the same SES endpoint.
  const stacks = useTwoInstances({ sesMaxSendRate: RATE });
  let first!: TestStack;
  let second!: TestStack;
  beforeAll(() => {
    ({ first, second } = stacks);
  });

  it('sends every message of a batch above the rate, at the rate, with (almost) no throttled call', async () => {
    await clearEmails(first.sesUrl);
    const before = await gateStats(first.sesUrl);
    const started = Date.now();
    const response = await send(first, first.demo!.apiKey, messages(first.demo!.organizationId, 30, 'batch'));
    const elapsed = Date.now() - started;
    const body = (await response.json()) as { Messages: { Status: string }[] };
    expect(response.status).toBe(200);
    expect(body.Messages.every((m) => m.Status === 'Sent')).toBe(true);
    const after = await gateStats(first.sesUrl);
    // The target is at most 0.05 throttled calls per message sent (a late call on a loaded
    // machine can still meet a full bucket; it is retried at a new turn, never lost).
    expect(after.throttled - before.throttled).toBeLessThanOrEqual(1);
    expect(after.accepted - before.accepted).toBe(30);
    // A burst of one second's worth, then one every 100 ms: (30 − 10) / 10 = 2 s at the least.
    expect(elapsed).toBeGreaterThanOrEqual(1_900);
    expect(await sentEmails(first.sesUrl)).toHaveLength(30);
  }, 30_000);

  it('sends a message to more recipients than the rate, paced so that SES never throttles it', async () => {
    await clearEmails(first.sesUrl);
    await new Promise((resolve) => setTimeout(resolve, 2_000)); // let the budget run idle
    const before = await gateStats(first.sesUrl);
    const demo = first.demo!;
    // Wide and narrow in turn: each narrow one's turn comes one interval after the wide one before it.
    const widths = [15, 1, 15, 1];
    const body = messages(demo.organizationId, widths.length, 'wide');
    body.Messages.forEach((message, i) => (message.To = Array.from({ length: widths[i]! }, (_, j) => `w${j}@example.org`)));
    const started = Date.now();
    const response = await send(first, demo.apiKey, body);
    const elapsed = Date.now() - started;
    expect({ status: response.status, body: await response.json() }).toMatchObject({ status: 200, body: { Messages: widths.map(() => ({ Status: 'Sent' })) } });
    const after = await gateStats(first.sesUrl);
    expect(after.throttled - before.throttled).toBeLessThanOrEqual(1);
    expect(after.recipients - before.recipients).toBe(32);
    // 32 recipients at 10 a second, a second's worth at once: 2.2 s at the least.
    expect(elapsed).toBeGreaterThanOrEqual(2_100);
  }, 30_000);

  it('shares one budget between two instances, so together they stay within the rate', async () => {
    await clearEmails(first.sesUrl);
    await new Promise((resolve) => setTimeout(resolve, 2_000)); // let the budget run idle
    const before = await gateStats(first.sesUrl);
    const demo = first.demo!;
    const started = Date.now();
    const responses = await Promise.all([
      send(first, demo.apiKey, messages(demo.organizationId, 20, 'first')),
      send(second, demo.apiKey, messages(demo.organizationId, 20, 'second')),
    ]);
    const elapsed = Date.now() - started;
    for (const response of responses) {
      expect(response.status).toBe(200);
      expect(((await response.json()) as { Messages: { Status: string }[] }).Messages.every((m) => m.Status === 'Sent')).toBe(true);
    }
    const after = await gateStats(first.sesUrl);
    // Two budgets of their own would send at twice the rate, and the gate would refuse half.
    expect(after.throttled - before.throttled).toBeLessThanOrEqual(2);
    expect(after.accepted - before.accepted).toBe(40);
    expect(elapsed).toBeGreaterThanOrEqual(2_900); // (40 − 10) / 10 s
    expect(await sentEmails(first.sesUrl)).toHaveLength(40);
  }, 30_000);
});
