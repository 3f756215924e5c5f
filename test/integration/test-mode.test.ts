/**
 * Test mode through the real send handler on dynalite (docs/keys.md): the choice of mailer is made
 * for a test key before any mailer is touched, so the SES mailer (here one that fails the test if
 * called) never sees a test message; the simulated events are SES's shapes, and what the events
 * code reads from them never suppresses and marks every webhook `"Test": true`.
 */
import { describe, expect, it } from '@jest/globals';
import { ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { parseSesEvent } from '../../functions/shared/delivery/ses-event';
import type { Mailer } from '../../functions/shared/mail/ports';
import type { DailyUsage } from '../../functions/shared/store/ports';
import { TestMailer } from '../../functions/shared/mail/test-mailer';
import { webhookJob } from '../../functions/shared/webhooks/payload';
import type { Harness, Tenant } from '../support/harness';
import { authorised, message, sendBody, useHarness } from '../support/harness';

let h!: Harness;
let tenant!: Tenant;
useHarness((harness, first) => {
  h = harness;
  tenant = first;
});

describe('test mode in the send handler', () => {
  it('never hands a test key\'s message to the SES mailer, and publishes the simulator\'s events instead', async () => {
    const { key } = await h.admin.rotateKey(tenant.userId, { test: true });
    const sesCalls: unknown[] = [];
    const mailer: Mailer = {
      send: async (email) => {
        sesCalls.push(email);
        throw new Error('the SES mailer was called for a test message');
      },
    };
    const published: Record<string, any>[] = [];
    const testMailer = new TestMailer({ publish: async (events) => void published.push(...events) }, { region: 'us-east-1', configurationSet: 'test-set' });
    const keyed = { ...tenant, apiKey: key };
    const result = await h.invoke(
      { headers: authorised(keyed), body: sendBody(keyed, [message({ To: ['bounce@simulator.amazonses.com', 'bob@example.org'], Tags: { Campaign: 'spring' } })]) },
      { mailer, testMailer },
    );
    expect(result.statusCode).toBe(200);
    const [{ MessageId }] = result.body.Messages;
    expect(MessageId).toMatch(/^test-/);
    expect(sesCalls).toEqual([]);
    expect(await h.sentEmails()).toEqual([]);

    expect(published.map((event) => event['detail-type'])).toEqual(['Email Sent', 'Email Delivered', 'Email Bounced']);
    const events = published.map((event) => parseSesEvent(event)!);
    expect(events.every((event) => event.messageId === MessageId && event.organizationId === tenant.organizationId && event.test)).toBe(true);
    const bounce = events.find((event) => event.type === 'Bounce')!;
    expect(bounce.recipients.map((r) => [r.address, r.status])).toEqual([['bounce@simulator.amazonses.com', 'Bounced']]);
    expect(bounce.suppress).toBeUndefined();
    expect(JSON.parse(webhookJob(bounce, bounce.recipients).payload).data).toMatchObject({ MessageId, Test: true, Tags: { Campaign: 'spring' } });
  });

  it('reads where the daily quota stands before it sends: a read that fails sends nothing (503)', async () => {
    const own = await h.tenant();
    await h.admin.limits.set(own.organizationId, { daily: 5 });
    const keyed = { ...own, apiKey: (await h.admin.rotateKey(own.userId, { test: true })).key };
    const handed: unknown[] = [];
    const testMailer: Mailer = { send: async (email) => void handed.push(email) as never };
    const usage = h.deps.dailyUsage;
    const down: DailyUsage = { take: usage.take.bind(usage), giveBack: usage.giveBack.bind(usage), used: async () => Promise.reject(new ProvisionedThroughputExceededException({ message: 'down', $metadata: {} })) };
    const result = await h.invoke({ headers: authorised(keyed), body: sendBody(keyed) }, { testMailer, dailyUsage: down });
    expect(result.statusCode).toBe(503);
    expect(handed).toEqual([]);
  });

  it('sends a live key\'s message through the SES mailer, as before, with no Test mark anywhere', async () => {
    const { key } = await h.admin.rotateKey(tenant.userId);
    const keyed = { ...tenant, apiKey: key };
    const result = await h.invoke({ headers: authorised(keyed), body: sendBody(keyed) });
    expect(result.statusCode).toBe(200);
    expect(result.body.Messages[0].MessageId).not.toMatch(/^test-/);
    expect(await h.sentEmails()).toHaveLength(1);
  });
});
