/**
 * The daily quota on the send path against dynalite (CONTRACT section 11, item 2): what a request
 * takes of it comes back when nothing could be sent, so a storage fault never eats the quota; and
 * per failure code, what a message that failed gives back: everything after which SES certainly
 * did not send it, but not `OutcomeUnknown` (SES may have sent it).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { Pacer } from '../../functions/send/pacing';
import { utcDay } from '../../functions/shared/domain/org-limits';
import { StorageUnavailableProblem } from '../../functions/shared/http/problems';
import type { FailureCode, Mailer } from '../../functions/shared/mail/ports';
import { SendFailure } from '../../functions/shared/mail/ports';
import { createDynamoDbClient } from '../../functions/shared/runtime/clients';
import { DynamoDbDailyUsage } from '../../functions/shared/store/dynamodb-daily-usage';
import type { SendBudget } from '../../functions/shared/store/ports';
import { DynamoDbAdminStore } from '../../infra/admin/admin-store';
import type { Harness, Tenant } from '../support/harness';
import { DAY_MS, clearOfTurn } from '../support/clock';
import { authorised, message, sendBody, useHarness } from '../support/harness';
import { MemoryBudget } from '../support/memory-budget';

let h!: Harness;
let tenant!: Tenant;

useHarness(
  (harness, first) => {
    h = harness;
    tenant = first;
  },
  { env: { SES_MAX_SEND_RATE: '10' } },
);

/** A budget that cannot be reached: the request fails before anything is sent. */
const unreachable: SendBudget = {
  book: () => Promise.reject(new StorageUnavailableProblem()),
  release: () => Promise.resolve(),
};

describe('the daily quota on the send path', () => {
  it('gives back what a request took when nothing could be sent (503), and counts what is sent', async () => {
    await clearOfTurn(DAY_MS, 15_000);
    const documents = createDynamoDbClient(h.config);
    await new DynamoDbAdminStore(documents, h.config.tableName).limits.set(tenant.organizationId, { daily: 10 });
    const usage = new DynamoDbDailyUsage(documents, h.config.tableName);
    const today = utcDay(Date.now());

    const pacer = new Pacer({ budget: unreachable, quota: { maxSendRate: async () => undefined }, maxSendRate: 10, now: Date.now });
    const failed = await h.invoke({ headers: authorised(tenant), body: sendBody(tenant, [message({ To: ['a@example.org'] }), message({ To: ['b@example.org'] })]) }, { pacer });
    expect(failed.statusCode).toBe(503);
    expect(await usage.used(tenant.organizationId, today)).toBe(0);

    const sent = await h.invoke({ headers: authorised(tenant), body: sendBody(tenant, [message({ To: ['a@example.org', 'b@example.org'] })]) });
    expect(sent.statusCode).toBe(200);
    expect(sent.headers.RateLimit).toMatch(/^"daily";r=8;t=\d+$/);
    expect(await usage.used(tenant.organizationId, today)).toBe(2);
    documents.destroy();
  }, 20_000);
});

describe('what a failed message gives back of the daily quota, by failure code', () => {
  /** Fails every message to fail@example.org with `code`; sends the rest. */
  const failing = (code: FailureCode): Mailer => ({
    send: async (email) => {
      if (email.to.includes('fail@example.org')) throw new SendFailure(code);
      return { messageId: `ses-${randomUUID()}` };
    },
  });

  it.each<[FailureCode, 'kept' | 'given back']>([
    ['OutcomeUnknown', 'kept'],
    ['MessageRejected', 'given back'],
    ['SesUnavailable', 'given back'],
    ['Throttled', 'given back'],
    ['QuotaExceeded', 'given back'],
    ['SendingPaused', 'given back'],
    ['AccountSuspended', 'given back'],
    ['MailFromDomainNotVerified', 'given back'],
    ['SenderNotVerified', 'given back'],
    ['NotFound', 'given back'],
    ['BadRequest', 'given back'],
    ['SendFailed', 'given back'],
  ])('%s: its recipients are %s', async (code, fate) => {
    await clearOfTurn(DAY_MS, 10_000);
    // An Organization of its own, so each code starts from an unused quota.
    const org = await h.tenant();
    const documents = createDynamoDbClient(h.config);
    await new DynamoDbAdminStore(documents, h.config.tableName).limits.set(org.organizationId, { daily: 100 });
    const usage = new DynamoDbDailyUsage(documents, h.config.tableName);

    // Three recipients fail, two are sent: the two always count, the three only when kept.
    const body = sendBody(org, [message({ To: ['fail@example.org', 'x@example.org', 'y@example.org'] }), message({ To: ['a@example.org', 'b@example.org'] })]);
    // A pacer of its own: SES throttling slows the account's pace, which would reach the next case.
    const pacer = new Pacer({ budget: new MemoryBudget(), quota: { maxSendRate: async () => undefined }, maxSendRate: 10, now: Date.now });
    const response = await h.invoke({ headers: authorised(org), body }, { mailer: failing(code), pacer }, 3_000);
    const results = response.body.Messages as { Index: number; Status: string; Error?: { Code: string } }[];
    expect(results.find((r) => r.Index === 0)).toMatchObject({ Status: 'Failed', Error: { Code: code } });
    expect(results.find((r) => r.Index === 1)).toMatchObject({ Status: 'Sent' });
    expect(await usage.used(org.organizationId, utcDay(Date.now()))).toBe(fate === 'kept' ? 5 : 2);
    documents.destroy();
  }, 20_000);
});
