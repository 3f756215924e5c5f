/**
 * The Activity list's merge across Organizations (functions/me/activity.ts), against a store that
 * pages as DynamoDB does: a status is a filter applied after a Query's `Limit`, so a filtered page
 * can stop at its read budget holding fewer rows than a page, or none. Paging through with the
 * cursor must still show every matching row of every Organization exactly once, newest first.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { DeliveryStatus } from '../../functions/shared/delivery/recipient-state';
import type { ActivityPage, ActivityQuery } from '../../functions/shared/store/dynamodb-activity-store';
import { FILTERED_READS } from '../../functions/shared/store/dynamodb-activity-store';
import { ACTIVITY_PAGE_SIZE, listMessages } from '../../functions/me/activity';
import type { MemberOrganization } from '../../functions/me/organizations';

const ORGS = ['0b6c5a3e-2f4d-4e8a-9c1b-7d2e3f4a5b61', '0b6c5a3e-2f4d-4e8a-9c1b-7d2e3f4a5b62', '0b6c5a3e-2f4d-4e8a-9c1b-7d2e3f4a5b63'];
const STATUSES: DeliveryStatus[] = ['Delivered', 'Bounced', 'Complained'];

interface Row {
  readonly sk: string;
  readonly status: DeliveryStatus;
  readonly organizationId: string;
}

/** A partition read as the DynamoDB store reads it, with `perRead` rows to a filtered Query (the store's FILTERED_READ_ITEMS, made small). */
function fakeStore(rows: readonly Row[], perRead: number, counter: { queries: number }) {
  return {
    async page(query: ActivityQuery): Promise<ActivityPage> {
      const own = rows.filter((row) => row.organizationId === query.organizationId).sort((a, b) => (a.sk < b.sk ? 1 : -1));
      let at = query.after === undefined ? 0 : own.findIndex((row) => row.sk < query.after!);
      if (at < 0) at = own.length;
      const limit = query.status ? perRead : query.limit;
      const entries: ActivityPage['entries'] = [];
      const positions: string[] = [];
      let next: string | undefined;
      for (let read = 0; read < (query.status ? (query.reads ?? FILTERED_READS) : 1) && entries.length < query.limit; read++) {
        counter.queries++;
        const chunk = own.slice(at, at + limit);
        at += chunk.length;
        for (const row of chunk) {
          if (query.status && row.status !== query.status) continue;
          entries.push({ messageId: row.sk.split('#')[1]!, organizationId: row.organizationId, sentAt: row.sk.split('#')[0]!, from: 'a@example.com', recipients: ['b@example.org'], subject: 's', status: row.status });
          positions.push(row.sk);
        }
        // As DynamoDB: a Query that reached its Limit says where it stopped, even when nothing follows.
        next = chunk.length === limit ? chunk.at(-1)!.sk : undefined;
        if (!next) break;
      }
      return { entries, positions, next };
    },
  };
}

const member = ORGS.map((id, i) => ({ id, name: `Org ${i}` }) as MemberOrganization);

/**
 * Each Organization with its own share of bounces (every one, every other, one in 25), its rows
 * interleaved in time at random: a dense Organization fills its page while a sparse one stops at
 * its read budget, the case where a careless merge shows older rows first.
 */
const rowsArbitrary = fc
  .tuple(...ORGS.map(() => fc.record({ count: fc.integer({ min: 0, max: 150 }), bounceEvery: fc.constantFrom(1, 2, 25) })))
  .chain((specs) => {
    const total = specs.reduce((sum, spec) => sum + spec.count, 0);
    return fc.uniqueArray(fc.integer({ min: 0, max: 1_000_000 }), { minLength: total, maxLength: total }).map((times) => {
      let n = 0;
      return specs.flatMap((spec, org) =>
        Array.from({ length: spec.count }, (_, i): Row => {
          const at = times[n++]!;
          const status: DeliveryStatus = i % spec.bounceEvery === 0 ? 'Bounced' : i % 7 === 3 ? 'Complained' : 'Delivered';
          return { sk: `${new Date(Date.UTC(2026, 10, 1) + at * 1_000).toISOString()}#m-${org}-${i}`, status, organizationId: ORGS[org]! };
        }),
      );
    });
  });

describe('the Activity merge across Organizations', () => {
  it('shows every matching row once, newest first, across pages that stop at their read budget', async () => {
    await fc.assert(
      fc.asyncProperty(rowsArbitrary, fc.constantFrom(undefined, ...STATUSES), fc.integer({ min: 1, max: 6 }), async (rows, status, perRead) => {
        const counter = { queries: 0 };
        const store = fakeStore(rows, perRead, counter);
        const seen: string[] = [];
        let cursor: string | null = '';
        for (let page = 0; cursor !== null; page++) {
          if (page > 500) throw new Error('the cursor never ends');
          const before = counter.queries;
          const answer = await listMessages(member, { ...(status && { status }), ...(cursor && { cursor }) }, store);
          // The read budget is the request's, not each Organization's.
          expect(counter.queries - before).toBeLessThanOrEqual(status ? Math.max(FILTERED_READS, ORGS.length) : ORGS.length);
          expect(answer.Messages.length).toBeLessThanOrEqual(ACTIVITY_PAGE_SIZE);
          seen.push(...answer.Messages.map((message) => message.MessageId));
          cursor = answer.Cursor;
        }
        const expected = rows.filter((row) => !status || row.status === status).sort((a, b) => (a.sk < b.sk ? 1 : -1)).map((row) => row.sk.split('#')[1]!);
        expect(seen).toEqual(expected);
      }),
      { numRuns: 150 },
    );
  });
});
