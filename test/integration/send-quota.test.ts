/**
 * The daily quota on the send path against dynalite (CONTRACT section 11, item 2): what a request
 * takes of it comes back when nothing could be sent, so a storage fault never eats the quota.
 */
import { describe, expect, it } from '@jest/globals';
import { Pacer } from '../../functions/send/pacing';
import { utcDay } from '../../functions/shared/domain/org-limits';
import { StorageUnavailableProblem } from '../../functions/shared/http/problems';
import { createDynamoDbClient } from '../../functions/shared/runtime/clients';
import { DynamoDbDailyUsage } from '../../functions/shared/store/dynamodb-daily-usage';
import type { SendBudget } from '../../functions/shared/store/ports';
import { DynamoDbAdminStore } from '../../infra/admin/admin-store';
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

/** A budget that cannot be reached: the request fails before anything is sent. */
const unreachable: SendBudget = {
  book: () => Promise.reject(new StorageUnavailableProblem()),
  release: () => Promise.resolve(),
};

describe('the daily quota on the send path', () => {
  it('gives back what a request took when nothing could be sent (503), and counts what is sent', async () => {
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
