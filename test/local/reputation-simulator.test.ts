/**
 * Simulator mail does not pad an Organization's reputation (security audit round 3, finding 6;
 * docs/security-round-3.md), through the local stack over real HTTP and the admin command line:
 * with REPUTATION_MIN_SENDS=1, one request of 24 messages to `success+N@simulator.amazonses.com`
 * and one to `bounce@simulator.amazonses.com` used to read as 4 % bounces (25 sends) and stay
 * under the 5 % threshold; SES leaves simulator mail out of the account's rates, so the service
 * counts only the bounced one (as a send and a bounce): 100 %, paused.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { adminEnv, adminJson, expectProblem, messageBody, provisionTenant, send, startTestStack } from './helpers';
import type { TestStack } from './helpers';

let stack: TestStack;
let env: Record<string, string>;

beforeAll(async () => {
  stack = await startTestStack({ serviceEnv: { REPUTATION_MIN_SENDS: '1' } });
  env = adminEnv(stack);
});
afterAll(async () => stack?.stop());

describe('mail to the mailbox simulator', () => {
  it('does not count as sends that dilute the bounce rate: 24 simulated successes and a bounce pause the Organization', async () => {
    const tenant = await provisionTenant(env);
    const body = messageBody(tenant.organizationId);
    const to = [...Array.from({ length: 24 }, (_, i) => `success+${i}@simulator.amazonses.com`), 'bounce@simulator.amazonses.com'];
    body.Messages = to.map((address, i) => ({ ...body.Messages[0]!, To: [address], Subject: `Padding ${i}` }));
    expect((await send(stack, tenant.apiKey, body)).status).toBe(200);

    const started = Date.now();
    let shown: Record<string, any>;
    for (;;) {
      shown = await adminJson(env, 'org', 'show', '--org', tenant.organizationId);
      // Every event in (the successes' too), or long enough for them on a loaded machine.
      if ((shown.paused === true && shown.reputation.hardBounces === 1) || Date.now() - started > 30_000) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(shown.reputation).toMatchObject({ sends: 1, hardBounces: 1 });
    expect(shown.paused).toBe(true);
    const next = messageBody(tenant.organizationId, { To: ['ada@example.org'] });
    expect((await expectProblem(await send(stack, tenant.apiKey, next), 403)).type).toMatch(/organization-paused$/);
  });
});
