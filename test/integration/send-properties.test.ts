/**
 * Properties over arbitrary request bodies, through the real handler and emulators: the handler
 * never throws, never answers 5xx to bad input, every 4xx is a problem document, and a 4xx never
 * comes with a send.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { Harness, Tenant } from '../support/harness';
import { authorised, message, useHarness } from '../support/harness';

let h!: Harness;
let tenant!: Tenant;

useHarness((harness, first) => {
  h = harness;
  tenant = first;
});

const FIELDS = ['To', 'Cc', 'Bcc', 'From', 'DisplayName', 'Subject', 'TextContent', 'HtmlContent', 'ExpirationDateTime'];
const nastyString = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.constantFrom('', ' ', '\r\n', 'a@b', 'noreply@example.com', 'x@evil.test', '2026-02-30 10:00:00', '2099-01-01 00:00:00', '__proto__', 'null'),
  fc.emailAddress(),
);
const anyValue = fc.oneof(nastyString, fc.integer(), fc.boolean(), fc.constant(null), fc.array(nastyString, { maxLength: 4 }), fc.object({ maxDepth: 1 }));

/** Starts from a valid message and mutates a few fields: the near-misses that matter most. */
const mutatedMessage = fc
  .record({
    drop: fc.subarray(FIELDS, { maxLength: 3 }),
    set: fc.dictionary(fc.oneof(fc.constantFrom(...FIELDS), fc.string({ maxLength: 8 })), anyValue, { maxKeys: 3 }),
  })
  .map(({ drop, set }) => {
    const base = message({ DisplayName: 'Acme' });
    for (const field of drop) delete base[field];
    return Object.assign(base, set);
  });

const mutatedBody = fc.oneof(
  // Untouched valid requests keep the success side of the property exercised on every run.
  fc.integer({ min: 1, max: 3 }).map((n) => ({ OrganizationId: tenant.organizationId, Messages: Array.from({ length: n }, () => message()) })),
  fc.record(
    {
      OrganizationId: fc.oneof(fc.constant(null), fc.uuid(), nastyString),
      organizationId: fc.oneof(fc.uuid(), nastyString),
      Messages: fc.oneof(fc.array(mutatedMessage, { minLength: 0, maxLength: 4 }), anyValue),
      Extra: anyValue,
    },
    { requiredKeys: [] },
  ),
  fc.array(mutatedMessage, { maxLength: 4 }).map((Messages) => ({ OrganizationId: tenant.organizationId, Messages })),
  fc.jsonValue(),
);

describe('the send handler, for arbitrary bodies', () => {
  it('never throws or answers 5xx, answers 4xx with a problem document, and sends nothing on a 4xx', async () => {
    let fourHundreds = 0;
    let successes = 0;
    await fc.assert(
      fc.asyncProperty(mutatedBody, async (body) => {
        await h.clearEmails();
        const result = await h.invoke({ headers: authorised(tenant), body });
        expect(result.statusCode).toBeLessThan(500);
        expect(result.rawBody.length).toBeLessThan(64 * 1024);
        const sent = await h.sentEmails();
        if (result.statusCode >= 400) {
          fourHundreds++;
          expect(result.headers['Content-Type']).toBe('application/problem+json');
          expect(result.body.status).toBe(result.statusCode);
          expect(sent).toHaveLength(0);
        } else {
          successes++;
          expect(sent.length).toBe(result.body.Messages.filter((m: { Status: string }) => m.Status === 'Sent').length);
        }
      }),
      { numRuns: 150 },
    );
    // The generator must exercise both sides, or the property proves little.
    expect(fourHundreds).toBeGreaterThan(20);
    expect(successes).toBeGreaterThan(0);
  });

  it('answers 400 or 415 for arbitrary raw bodies and content types, never 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 200 }), fc.constantFrom('application/json', 'text/plain', 'application/json; charset=latin1', ''), async (raw, type) => {
        const result = await h.invoke({ headers: authorised(tenant, { 'content-type': type }), body: raw });
        expect([400, 415]).toContain(result.statusCode);
      }),
      { numRuns: 100 },
    );
  });

  it('refuses a lone surrogate in any string field with that field\'s pointer, and sends any well-formed text', async () => {
    const LONE = /[\uD800-\uDFFF]/u;
    const fullUnicode = fc.oneof(
      fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }),
      fc.tuple(fc.string({ maxLength: 4 }), fc.constantFrom('\ud800', '\udbff', '\udc00', '\udfff'), fc.string({ maxLength: 4 })).map((parts) => parts.join('')),
      fc.constantFrom('🚀 launch', 'ünïcødé', '\ud83d\ude80'),
    );
    // Each field with where its value sits, so the pointer can be checked.
    const fields: [string, string, (value: string) => Record<string, unknown>][] = [
      ['Subject', '/Messages/0/Subject', (v) => ({ Subject: `S ${v}` })],
      ['DisplayName', '/Messages/0/DisplayName', (v) => ({ DisplayName: v })],
      ['TextContent', '/Messages/0/TextContent', (v) => ({ TextContent: v })],
      ['HtmlContent', '/Messages/0/HtmlContent', (v) => ({ HtmlContent: v })],
      ['From', '/Messages/0/From', (v) => ({ From: `n${v}@example.com` })],
      ['To', '/Messages/0/To/0', (v) => ({ To: [`a${v}@example.org`] })],
      ['Cc', '/Messages/0/Cc/0', (v) => ({ Cc: [`c${v}@example.org`] })],
      ['Bcc', '/Messages/0/Bcc/0', (v) => ({ Bcc: [`b${v}@example.org`] })],
      ['ExpirationDateTime', '/Messages/0/ExpirationDateTime', (v) => ({ ExpirationDateTime: `2099-01-01 00:00:00${v}` })],
    ];
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...fields), fullUnicode, async ([, pointer, set], value) => {
        await h.clearEmails();
        const result = await h.invoke({ headers: authorised(tenant), body: { OrganizationId: tenant.organizationId, Messages: [message(set(value))] } });
        expect(result.statusCode).toBeLessThan(500);
        if (LONE.test(value)) {
          refused++;
          expect(result.statusCode).toBe(400);
          expect(result.body.errors).toContainEqual({ pointer, detail: expect.stringContaining('well-formed Unicode') });
          expect(await h.sentEmails()).toHaveLength(0);
        } else if (result.statusCode === 200) {
          expect(await h.sentEmails()).toHaveLength(1);
        }
      }),
      { numRuns: 150 },
    );
    expect(refused).toBeGreaterThan(20);
  });
});
