/**
 * fast-check over the HTTP surface of the local stack: random methods, paths, headers and
 * mutated bodies. Nothing answers 5xx, every 4xx is a problem document with its own status, and
 * a 4xx never comes with a send.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { LocalStack } from '../../infra/local/stack';
import { clearEmails, sentEmails } from '../support/ses-store';
import { useLocalStack } from './support';

let stack!: LocalStack;
useLocalStack((started) => {
  stack = started;
});

const validMessage = () => ({ From: `hello@${stack.demo!.senderDomain}`, To: ['fuzz@example.org'], Subject: 'fuzz', TextContent: 'fuzz' });

const header = fc.oneof(fc.string({ maxLength: 40 }).map((s) => s.replace(/[^\x20-\x7e]/g, '')), fc.constantFrom('', ' ', 'x'.repeat(300)));

const request = fc.record({
  method: fc.constantFrom('POST', 'POST', 'POST', 'GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'),
  path: fc.constantFrom('/v1.2/email/send', '/v1.2/email/send', '/v1.2/email/send/', '/v1.2/email', '/V1.2/EMAIL/SEND', '/v1.2/email/send?x=1', '/nope'),
  auth: fc.oneof(
    fc.constant('valid'),
    fc.constant('valid'),
    fc.constant(undefined),
    header.map((h) => `Bearer ${h}`),
    header,
    fc.constantFrom('bearer  KEY', 'Basic dXNlcjpwYXNz', 'Bearer tme_'),
  ),
  contentType: fc.constantFrom('application/json', 'application/json; charset=utf-8', 'application/JSON', 'text/plain', 'application/x-www-form-urlencoded', undefined),
  idempotencyKey: fc.option(header, { nil: undefined }),
  body: fc.oneof(
    fc.constant('valid'),
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc.string({ maxLength: 100 }),
    fc
      .record({ field: fc.constantFrom('To', 'From', 'Subject', 'TextContent', 'ExpirationDateTime', 'DisplayName', 'Cc'), value: fc.jsonValue() })
      .map(({ field, value }) => ({ mutate: field, value })),
  ),
});

describe('the HTTP surface of the local stack', () => {
  it('never answers 5xx, answers 4xx with problem documents, and sends nothing on a 4xx', async () => {
    let fourHundreds = 0;
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        await clearEmails(stack.sesUrl);
        const headers: Record<string, string> = {};
        if (r.auth === 'valid') headers.authorization = `Bearer ${stack.demo!.apiKey}`;
        else if (r.auth !== undefined) headers.authorization = r.auth;
        if (r.contentType) headers['content-type'] = r.contentType;
        if (r.idempotencyKey !== undefined) headers['idempotency-key'] = r.idempotencyKey;
        let body: string | undefined;
        if (r.body === 'valid') body = JSON.stringify({ OrganizationId: stack.demo!.organizationId, Messages: [validMessage()] });
        else if (typeof r.body === 'string') body = r.body;
        else body = JSON.stringify({ OrganizationId: stack.demo!.organizationId, Messages: [{ ...validMessage(), [r.body.mutate]: r.body.value }] });
        const canHaveBody = !['GET', 'HEAD'].includes(r.method);

        const response = await fetch(`${stack.apiUrl}${r.path}`, { method: r.method, headers, ...(canHaveBody && { body }) });
        const text = await response.text();
        expect(response.status).toBeLessThan(500);
        // No answer grows with what the request held (CONTRACT section 2).
        expect(text.length).toBeLessThan(64 * 1024);
        if (response.status >= 400) {
          fourHundreds++;
          expect(response.headers.get('content-type')).toBe('application/problem+json');
          expect(JSON.parse(text).status).toBe(response.status);
          expect(await sentEmails(stack.sesUrl)).toHaveLength(0);
        }
        expect(text).not.toContain(stack.demo!.apiKey);
      }),
      { numRuns: 200 },
    );
    expect(fourHundreds).toBeGreaterThan(50);
  }, 180_000);
});
