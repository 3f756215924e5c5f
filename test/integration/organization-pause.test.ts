/**
 * The send path and a paused Organization (CONTRACT section 11 items 3 and 4), with the real
 * handler against dynalite and the SES emulator: a pause recorded on the Organization item turns
 * its sends into 403 `organization-paused` with nothing sent, other Organizations send on, resume
 * lifts it; and, with SES tenants on, a send SES refuses for a paused tenant (a fault the
 * emulator cannot produce, so SES is mocked for it) pauses the Organization.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { SESv2Client, SendEmailCommand, SendingPausedException } from '@aws-sdk/client-sesv2';
import { mockClient } from 'aws-sdk-client-mock';
import type { AwsClientStub } from 'aws-sdk-client-mock';
import { TENANT_PAUSED_REASON } from '../../functions/shared/domain/reputation';
import { createDynamoDbClient } from '../../functions/shared/runtime/clients';
import { DynamoDbAccessStore } from '../../functions/shared/store/dynamodb-access-store';
import { DynamoDbReputationStore } from '../../functions/shared/store/dynamodb-reputation-store';
import type { Harness, Tenant } from '../support/harness';
import { authorised, message, sendBody, useHarness } from '../support/harness';

let h: Harness;
let tenant: Tenant;
useHarness(
  (harness, t) => {
    h = harness;
    tenant = t;
  },
  { env: { SES_TENANTS: 'true' } },
);
const reputations = () => new DynamoDbReputationStore(createDynamoDbClient(h.config), h.config.tableName);

describe('a paused Organization', () => {
  it('gets 403 organization-paused saying why and since when, nothing sent; others send on; resume lifts it', async () => {
    const other = await h.tenant();
    const pause = { at: '2026-11-23T10:00:00.000Z', reason: 'hard-bounce rate 75 % (30 of 40 recipients in the last 7 days) is at or above 5 %' };
    expect(await reputations().pause(tenant.organizationId, pause)).toBe(true);
    await h.clearEmails();

    const refused = await h.invoke({ headers: authorised(tenant), body: sendBody(tenant, [message(), message()]) });
    expect(refused.statusCode).toBe(403);
    expect(refused.headers['Content-Type']).toBe('application/problem+json');
    expect(refused.body.type).toMatch(/\/organization-paused$/);
    expect(refused.body.detail).toContain(`since ${pause.at}: ${pause.reason}`);
    expect(await h.sentEmails()).toHaveLength(0);

    expect((await h.invoke({ headers: authorised(other), body: sendBody(other) })).statusCode).toBe(200);

    expect(await reputations().resume(tenant.organizationId)).toEqual(pause);
    expect((await h.invoke({ headers: authorised(tenant), body: sendBody(tenant) })).statusCode).toBe(200);
  });
});

describe('a paused Organization and Idempotency-Key', () => {
  it('replays a request that completed before the pause, and refuses a new one, sending nothing', async () => {
    const own = await h.tenant();
    const body = sendBody(own, [message()]);
    const first = await h.invoke({ headers: authorised(own, { 'Idempotency-Key': 'before-the-pause' }), body });
    expect(first.statusCode).toBe(200);
    expect(await reputations().pause(own.organizationId, { at: '2026-11-23T10:00:00.000Z', reason: 'complaint rate 1 %' })).toBe(true);
    await h.clearEmails();

    const retry = await h.invoke({ headers: authorised(own, { 'Idempotency-Key': 'before-the-pause' }), body });
    expect(retry.statusCode).toBe(200);
    expect(retry.headers['Idempotent-Replayed']).toBe('true');
    expect(retry.body).toEqual(first.body);
    const fresh = await h.invoke({ headers: authorised(own, { 'Idempotency-Key': 'after-the-pause' }), body });
    expect(fresh.statusCode).toBe(403);
    expect(await h.sentEmails()).toHaveLength(0);
  });
});

describe('with SES tenants', () => {
  // Made per test: a mock of the client class answers for every instance, the harness's too.
  let ses: AwsClientStub<SESv2Client>;
  beforeEach(() => {
    ses = mockClient(SESv2Client);
  });
  afterEach(() => ses.restore());

  it('pauses the Organization when SES refuses a send because it paused the tenant', async () => {
    const own = await h.tenant();
    ses.on(SendEmailCommand).rejects(new SendingPausedException({ message: 'Sending paused for this tenant.', $metadata: {} }));
    const result = await h.invoke({ headers: authorised(own), body: sendBody(own) });
    expect(result.body.Messages[0]).toMatchObject({ Status: 'Failed', Error: { Code: 'SendingPaused', Retryable: false } });
    expect(ses.commandCalls(SendEmailCommand)[0]?.args[0].input.TenantName).toBe(`org-${own.organizationId}`);

    const access = new DynamoDbAccessStore(createDynamoDbClient(h.config), h.config.tableName);
    expect((await access.lookup(undefined, own.organizationId)).organization?.paused?.reason).toBe(TENANT_PAUSED_REASON);
    ses.restore();
    const next = await h.invoke({ headers: authorised(own), body: sendBody(own) });
    expect(next.statusCode).toBe(403);
    expect(next.body.type).toMatch(/\/organization-paused$/);
  });

  it.each([['an account', 'Sending is paused for this account.'], ['a configuration-set', 'Sending is paused for this configuration set.']])(
    'does not pause for %s pause',
    async (_kind, refusal) => {
      const own = await h.tenant();
      ses.on(SendEmailCommand).rejects(new SendingPausedException({ message: refusal, $metadata: {} }));
      const result = await h.invoke({ headers: authorised(own), body: sendBody(own) });
      // The control: SES was asked, for this tenant, and refused with the pause; only its kind differs.
      expect(ses.commandCalls(SendEmailCommand)).toHaveLength(1);
      expect(ses.commandCalls(SendEmailCommand)[0]?.args[0].input.TenantName).toBe(`org-${own.organizationId}`);
      expect(result.body.Messages[0]).toMatchObject({ Status: 'Failed', Error: { Code: 'SendingPaused', Retryable: false } });

      const access = new DynamoDbAccessStore(createDynamoDbClient(h.config), h.config.tableName);
      expect((await access.lookup(undefined, own.organizationId)).organization?.paused).toBeUndefined();
      ses.restore();
      expect((await h.invoke({ headers: authorised(own), body: sendBody(own) })).statusCode).toBe(200);
    },
  );
});
