/**
 * CONTRACT sections 1-5 and 7, row by row, through the real handler, dynalite and the SES
 * emulator. Each test checks what reached the emulator, not only the response.
 */
import { beforeEach, describe, expect, it } from '@jest/globals';
import { gzipSync } from 'node:zlib';
import libmime from 'libmime';
import { generateApiKey } from '../../functions/shared/domain/api-keys';
import type { Harness, Tenant } from '../support/harness';
import { authorised, message, sendBody, useHarness } from '../support/harness';
import { withLastCharChanged } from '../support/tamper';

let h!: Harness;
let tenant!: Tenant;

useHarness(
  (harness, first) => {
    h = harness;
    tenant = first;
  },
  { senders: ['example.com', 'billing@acme.test'] },
);
beforeEach(async () => h.clearEmails());

const send = (body: unknown, headers: Record<string, string> = authorised(tenant)) => h.invoke({ headers, body });

function expectProblem(result: { statusCode: number; headers: Record<string, string>; body: any }, status: number): void {
  expect(result.statusCode).toBe(status);
  expect(result.headers['Content-Type']).toBe('application/problem+json');
  expect(result.body).toMatchObject({ status, title: expect.any(String), type: expect.stringMatching(/^https:\/\/.+\/problems\//) });
  expect(JSON.stringify(result.body)).not.toMatch(/at .+\.(ts|js):\d+/); // no stack traces
}

describe('POST /v1.2/email/send: success', () => {
  it('sends one message and answers 200 with the SES message id', async () => {
    const result = await send(sendBody(tenant));
    expect(result.statusCode).toBe(200);
    expect(result.headers['Content-Type']).toBe('application/json');
    const emails = await h.sentEmails();
    expect(emails).toHaveLength(1);
    expect(result.body).toEqual({
      OrganizationId: tenant.organizationId,
      Messages: [{ Index: 0, Status: 'Sent', MessageId: emails[0]!.messageId }],
    });
    expect(emails[0]).toMatchObject({
      from: 'noreply@example.com',
      destination: { to: ['alice@example.org'], cc: [], bcc: [] },
      subject: 'Your receipt',
      body: { text: 'Thanks for your order.' },
    });
  });

  it('sends every message of a request, results in request order', async () => {
    const messages = Array.from({ length: 12 }, (_, i) => message({ Subject: `Order ${i}`, To: [`user${i}@example.org`] }));
    const result = await send(sendBody(tenant, messages));
    expect(result.statusCode).toBe(200);
    expect(result.body.Messages.map((m: { Index: number }) => m.Index)).toEqual([...Array(12).keys()]);
    const emails = await h.sentEmails();
    expect(emails).toHaveLength(12);
    for (const [i, outcome] of result.body.Messages.entries()) {
      const email = emails.find((e) => e.messageId === outcome.MessageId)!;
      expect(email.subject).toBe(`Order ${i}`);
      expect(email.destination.to).toEqual([`user${i}@example.org`]);
    }
  });

  it('accepts the organizationId spelling too', async () => {
    const result = await send({ organizationId: tenant.organizationId, Messages: [message()] });
    expect(result.statusCode).toBe(200);
    expect(await h.sentEmails()).toHaveLength(1);
  });

  it('accepts both spellings when they hold the same id, in any case', async () => {
    const result = await send({
      OrganizationId: tenant.organizationId.toUpperCase(),
      organizationId: tenant.organizationId,
      Messages: [message()],
    });
    expect(result.statusCode).toBe(200);
  });

  it('compares the Organization id case-insensitively', async () => {
    const result = await send({ OrganizationId: tenant.organizationId.toUpperCase(), Messages: [message()] });
    expect(result.statusCode).toBe(200);
    expect(result.body.OrganizationId).toBe(tenant.organizationId.toUpperCase());
  });

  it('delivers To, Cc and several Bcc recipients', async () => {
    const result = await send(
      sendBody(tenant, [message({ To: ['a@example.org'], Cc: ['b@example.org'], Bcc: ['c@example.org', 'd@example.org'] })]),
    );
    expect(result.statusCode).toBe(200);
    const [email] = await h.sentEmails();
    expect(email!.destination).toEqual({ to: ['a@example.org'], cc: ['b@example.org'], bcc: ['c@example.org', 'd@example.org'] });
  });

  it('sends to Bcc only', async () => {
    const result = await send(sendBody(tenant, [message({ To: undefined, Bcc: ['hidden@example.org'] })]));
    expect(result.statusCode).toBe(200);
    expect((await h.sentEmails())[0]!.destination.bcc).toEqual(['hidden@example.org']);
  });

  it('sends text and HTML together', async () => {
    const result = await send(sendBody(tenant, [message({ HtmlContent: '<p>Thanks</p>' })]));
    expect(result.statusCode).toBe(200);
    const [email] = await h.sentEmails();
    expect(email!.body.text).toBe('Thanks for your order.');
    expect(email!.body.html).toContain('<p>Thanks</p>');
  });

  it('sends HTML only', async () => {
    const result = await send(sendBody(tenant, [message({ TextContent: undefined, HtmlContent: '<b>Hi</b>' })]));
    expect(result.statusCode).toBe(200);
    expect((await h.sentEmails())[0]!.body.html).toContain('<b>Hi</b>');
  });

  it('keeps a UTF-8 subject and body intact', async () => {
    const result = await send(sendBody(tenant, [message({ Subject: 'Grüße, 你好 ✓', TextContent: 'Ünïcödé body ✓' })]));
    expect(result.statusCode).toBe(200);
    const [email] = await h.sentEmails();
    expect(email!.subject).toBe('Grüße, 你好 ✓');
    expect(email!.body.text).toBe('Ünïcödé body ✓');
  });

  it('quotes an ASCII DisplayName as RFC 5322 requires', async () => {
    await send(sendBody(tenant, [message({ DisplayName: 'Acme "Billing" \\ Team' })]));
    const [email] = await h.sentEmails();
    expect(email!.from).toBe('"Acme \\"Billing\\" \\\\ Team" <noreply@example.com>');
  });

  it('encodes a non-ASCII DisplayName as an RFC 2047 encoded-word', async () => {
    await send(sendBody(tenant, [message({ DisplayName: 'Zoë Müller — Support' })]));
    const [email] = await h.sentEmails();
    expect(email!.from).toMatch(/^=\?UTF-8\?B\?[A-Za-z0-9+/=]+\?=( =\?UTF-8\?B\?[A-Za-z0-9+/=]+\?=)* <noreply@example\.com>$/);
    expect(/[^\x20-\x7e]/.test(email!.from)).toBe(false);
    expect(libmime.decodeWords(email!.from.replace(/ <.*>$/, ''))).toBe('Zoë Müller — Support');
  });

  it('sends internationalised domains as Punycode', async () => {
    const result = await send(sendBody(tenant, [message({ To: ['kunde@bücher.de'] })]));
    expect(result.statusCode).toBe(200);
    expect((await h.sentEmails())[0]!.destination.to).toEqual(['kunde@xn--bcher-kva.de']);
  });

  it('allows an exact sender address identity', async () => {
    const result = await send(sendBody(tenant, [message({ From: 'billing@acme.test' })]));
    expect(result.statusCode).toBe(200);
  });

  it('matches the sender domain case-insensitively', async () => {
    const result = await send(sendBody(tenant, [message({ From: 'NoReply@EXAMPLE.com' })]));
    expect(result.statusCode).toBe(200);
  });

  it('accepts Content-Type with a UTF-8 charset parameter', async () => {
    const result = await send(sendBody(tenant), authorised(tenant, { 'content-type': 'application/json; charset=utf-8' }));
    expect(result.statusCode).toBe(200);
  });

  it('accepts the Bearer scheme word in any case', async () => {
    const result = await send(sendBody(tenant), authorised(tenant, { authorization: `bEaReR ${tenant.apiKey}` }));
    expect(result.statusCode).toBe(200);
  });

  it('accepts header names in any case (normalised before use)', async () => {
    const event = { Authorization: `Bearer ${tenant.apiKey}`, 'Content-Type': 'application/json' };
    const result = await h.invoke({ headers: event, body: sendBody(tenant) });
    expect(result.statusCode).toBe(200);
  });
});

describe('expiry', () => {
  it('does not send a message whose ExpirationDateTime (UTC) has passed, and reports it Expired', async () => {
    const result = await send(
      sendBody(tenant, [message({ ExpirationDateTime: '2020-01-01 00:00:00' }), message({ ExpirationDateTime: '2099-12-31 23:59:59' })]),
    );
    expect(result.statusCode).toBe(200);
    expect(result.body.Messages[0]).toEqual({ Index: 0, Status: 'Expired' });
    expect(result.body.Messages[1]).toMatchObject({ Index: 1, Status: 'Sent' });
    expect(await h.sentEmails()).toHaveLength(1);
  });

  it('reads the time as UTC: one minute ago in UTC has expired', async () => {
    const past = new Date(Date.now() - 60_000).toISOString().slice(0, 19).replace('T', ' ');
    const result = await send(sendBody(tenant, [message({ ExpirationDateTime: past })]));
    expect(result.body.Messages[0].Status).toBe('Expired');
    expect(await h.sentEmails()).toHaveLength(0);
  });
});

describe('request rules (400, 413, 415)', () => {
  it('answers 415 for a non-JSON Content-Type and sends nothing', async () => {
    const result = await send(JSON.stringify(sendBody(tenant)), authorised(tenant, { 'content-type': 'text/plain' }));
    expectProblem(result, 415);
    expect(await h.sentEmails()).toHaveLength(0);
  });

  it('answers 415 without a Content-Type', async () => {
    const result = await send(sendBody(tenant), { authorization: `Bearer ${tenant.apiKey}` });
    expectProblem(result, 415);
  });

  it('answers 413 for a body over the limit', async () => {
    const big = 'x'.repeat(h.config.maxBodyBytes);
    const result = await send(sendBody(tenant, [message({ TextContent: big })]));
    expectProblem(result, 413);
    expect(await h.sentEmails()).toHaveLength(0);
  });

  it('answers 400 for malformed JSON', async () => {
    const result = await send('{"OrganizationId": ', authorised(tenant));
    expectProblem(result, 400);
  });

  it('answers 400 naming both spellings when they disagree', async () => {
    const result = await send({ OrganizationId: tenant.organizationId, organizationId: '00000000-0000-0000-0000-000000000000', Messages: [message()] });
    expectProblem(result, 400);
    expect(result.body.errors).toContainEqual({ pointer: '/organizationId', detail: expect.stringContaining('conflicts') });
    expect(await h.sentEmails()).toHaveLength(0);
  });

  it('answers 400 when the Organization id is missing', async () => {
    const result = await send({ Messages: [message()] });
    expectProblem(result, 400);
    expect(result.body.errors).toContainEqual(expect.objectContaining({ pointer: '/OrganizationId' }));
  });

  it('lists every problem at once with JSON pointers, and sends nothing, not even the valid messages', async () => {
    const result = await send(
      sendBody(tenant, [
        message(),
        message({ To: ['ok@example.org', 'not-an-address'], Subject: '' }),
        message({ From: undefined, TextContent: undefined, Extra: 1 }),
        message({ ExpirationDateTime: '2026-02-30 10:00:00' }),
      ]),
    );
    expectProblem(result, 400);
    const pointers = result.body.errors.map((e: { pointer: string }) => e.pointer).sort();
    expect(pointers).toEqual(
      [
        '/Messages/1/To/1',
        '/Messages/1/Subject',
        '/Messages/2/From',
        '/Messages/2/TextContent',
        '/Messages/2/Extra',
        '/Messages/3/ExpirationDateTime',
      ].sort(),
    );
    expect(result.body.detail).toBe('6 problems found');
    expect(await h.sentEmails()).toHaveLength(0);
  });

  it('answers 400 for 51 recipients', async () => {
    const to = Array.from({ length: 30 }, (_, i) => `to${i}@example.org`);
    const cc = Array.from({ length: 21 }, (_, i) => `cc${i}@example.org`);
    const result = await send(sendBody(tenant, [message({ To: to, Cc: cc })]));
    expectProblem(result, 400);
    expect(result.body.errors).toEqual([{ pointer: '/Messages/0', detail: expect.stringContaining('at most 50') }]);
  });

  it('sends exactly 50 recipients', async () => {
    const to = Array.from({ length: 50 }, (_, i) => `to${i}@example.org`);
    const result = await send(sendBody(tenant, [message({ To: to })]));
    expect(result.statusCode).toBe(200);
    expect((await h.sentEmails())[0]!.destination.to).toHaveLength(50);
  });

  it('answers 400 for 101 messages and for none', async () => {
    const many = await send(sendBody(tenant, Array.from({ length: 101 }, () => message())));
    expectProblem(many, 400);
    expect(many.body.errors).toEqual([{ pointer: '/Messages', detail: expect.stringContaining('at most 100') }]);
    const none = await send(sendBody(tenant, []));
    expectProblem(none, 400);
    expect(await h.sentEmails()).toHaveLength(0);
  });

  it('sends exactly 100 messages', async () => {
    const result = await send(sendBody(tenant, Array.from({ length: 100 }, (_, i) => message({ Subject: `m${i}` }))));
    expect(result.statusCode).toBe(200);
    expect(await h.sentEmails()).toHaveLength(100);
  });

  it('names unknown top-level fields', async () => {
    const result = await send({ ...sendBody(tenant), Mesages: [] });
    expectProblem(result, 400);
    expect(result.body.errors).toEqual([{ pointer: '/Mesages', detail: 'unknown field "Mesages"' }]);
  });
});

describe('ambiguous and hostile bodies: nothing is guessed, nothing partial is sent', () => {
  it('refuses duplicate keys instead of keeping the last one silently, and sends nothing', async () => {
    const raw = `{"OrganizationId":"00000000-0000-4000-8000-000000000000","OrganizationId":"${tenant.organizationId}","Messages":[{"From":"noreply@example.com","To":["first@example.org"],"To":["second@example.org"],"Subject":"s","TextContent":"t"}]}`;
    const result = await send(raw);
    expectProblem(result, 400);
    expect(result.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/OrganizationId', '/Messages/0/To']);
    expect(await h.sentEmails()).toHaveLength(0);
  });

  it('counts every duplicated key and lists the first 100, as every problem list does (security audit round 2, finding 5)', async () => {
    const repeated = Array.from({ length: 3_000 }, () => '"Subject":"s"').join(',');
    const raw = `{"OrganizationId":"${tenant.organizationId}","Messages":[{"From":"noreply@example.com","To":["a@example.org"],"TextContent":"t",${repeated}}]}`;
    const result = await send(raw);
    expectProblem(result, 400);
    expect(result.body.detail).toBe('2999 problems found; the first 100 are listed');
    expect(result.body.errors).toHaveLength(100);
    expect(await h.sentEmails()).toHaveLength(0);
  });

  it('answers 401, not 415 or 400, to a request with no key whatever else is wrong', async () => {
    for (const headers of [{}, { 'content-type': 'text/plain' }, { 'content-type': 'application/json' }] as Record<string, string>[]) {
      const result = await h.invoke({ headers, body: '' });
      expectProblem(result, 401);
      expect(result.headers['WWW-Authenticate']).toMatch(/^Bearer realm=/);
    }
    const malformed = await h.invoke({ headers: { authorization: 'Bearer nope', 'content-type': 'text/plain' }, body: 'x' });
    expectProblem(malformed, 401);
    expect(malformed.headers['WWW-Authenticate']).toBe('Bearer error="invalid_token"');
  });

  it('accepts a body that starts with a byte order mark', async () => {
    const result = await send(`\ufeff${JSON.stringify(sendBody(tenant))}`);
    expect(result.statusCode).toBe(200);
  });

  it('accepts "application/json;" with an empty parameter', async () => {
    const result = await send(sendBody(tenant), authorised(tenant, { 'content-type': 'application/json;' }));
    expect(result.statusCode).toBe(200);
  });

  it('refuses a base64 body that is not valid UTF-8, instead of sending replacement characters', async () => {
    const json = Buffer.from(JSON.stringify(sendBody(tenant, [message({ Subject: 'XX' })])));
    const bad = Buffer.from(json.toString('latin1').replace('XX', '\xff\xfe'), 'latin1');
    const result = await h.invoke({ headers: authorised(tenant), body: bad.toString('base64'), isBase64Encoded: true });
    expectProblem(result, 400);
    expect(result.body.detail).toContain('UTF-8');
    expect(await h.sentEmails()).toHaveLength(0);
  });

  it('answers 415 naming the coding to a compressed body, with Accept-Encoding: identity, and sends nothing', async () => {
    const gzipped = gzipSync(JSON.stringify(sendBody(tenant))).toString('base64');
    const result = await h.invoke({ headers: authorised(tenant, { 'content-encoding': 'gzip' }), body: gzipped, isBase64Encoded: true });
    expectProblem(result, 415);
    expect(result.body.detail).toContain('Content-Encoding "gzip"');
    expect(result.headers['Accept-Encoding']).toBe('identity');
    // After the key, as all but the body's size and media type: an unknown key gets 401 first.
    const unknown = await h.invoke({ headers: { ...authorised(tenant, { 'content-encoding': 'gzip' }), authorization: `Bearer ${generateApiKey()}` }, body: gzipped, isBase64Encoded: true });
    expectProblem(unknown, 401);
    // `identity` is no coding at all, also when the header came twice (joined with a comma).
    expect((await send(JSON.stringify(sendBody(tenant)), authorised(tenant, { 'content-encoding': 'Identity, identity' }))).statusCode).toBe(200);
    expect(await h.sentEmails()).toHaveLength(1);
  });

  it('counts a base64 body by its decoded bytes: exactly the limit is not too large', async () => {
    const exact = Buffer.alloc(h.config.maxBodyBytes, 0x20).toString('base64');
    const result = await h.invoke({ headers: { authorization: `Bearer ${tenant.apiKey}` }, body: exact, isBase64Encoded: true });
    expectProblem(result, 415);
  });

  it('treats a null spelling of the Organization id as absent', async () => {
    const result = await send({ OrganizationId: null, organizationId: tenant.organizationId, Messages: [message()] });
    expect(result.statusCode).toBe(200);
  });

  it('still lists bad addresses when there are too many recipients', async () => {
    const to = Array.from({ length: 51 }, (_, i) => (i === 7 ? 'not-an-address' : `to${i}@example.org`));
    const result = await send(sendBody(tenant, [message({ To: to })]));
    expectProblem(result, 400);
    expect(result.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/Messages/0', '/Messages/0/To/7']);
  });

  it('still lists bad messages when there are too many messages', async () => {
    const messages = Array.from({ length: 101 }, (_, i) => (i === 3 ? message({ Subject: '' }) : message()));
    const result = await send(sendBody(tenant, messages));
    expect(result.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/Messages', '/Messages/3/Subject']);
  });

  it('refuses control characters inside quoted local parts (header injection)', async () => {
    const result = await send(sendBody(tenant, [message({ To: ['"b\r\nBcc: evil@x.org"@example.org'] })]));
    expectProblem(result, 400);
    expect(result.body.errors).toEqual([{ pointer: '/Messages/0/To/0', detail: 'not a valid email address' }]);
    expect(await h.sentEmails()).toHaveLength(0);
  });
});

describe('authentication (401)', () => {
  it('answers 401 with a Bearer realm challenge when there is no Authorization header', async () => {
    const result = await send(sendBody(tenant), { 'content-type': 'application/json' });
    expectProblem(result, 401);
    expect(result.headers['WWW-Authenticate']).toMatch(/^Bearer realm="[^"]+"$/);
    expect(await h.sentEmails()).toHaveLength(0);
  });

  it.each([
    ['another scheme', (key: string) => `Basic ${key}`],
    ['no token', () => 'Bearer'],
    ['a malformed token', () => 'Bearer not-a-key'],
    ['a well-formed key that was never issued', () => `Bearer ${generateApiKey()}`],
    ['a key with a broken checksum', (key: string) => `Bearer ${withLastCharChanged(key)}`],
    ['an empty header', () => ''],
  ])('answers 401 invalid_token for %s', async (_label, header) => {
    const result = await send(sendBody(tenant), authorised(tenant, { authorization: header(tenant.apiKey) }));
    expectProblem(result, 401);
    expect(result.headers['WWW-Authenticate']).toBe('Bearer error="invalid_token"');
    expect(result.rawBody).not.toContain(tenant.apiKey);
    expect(await h.sentEmails()).toHaveLength(0);
  });

  it('stops accepting a rotated-out key and accepts the new one', async () => {
    const other = await h.tenant();
    const rotated = await h.admin.rotateKey(other.userId);
    const old = await send(sendBody(other), authorised(other));
    expect(old.statusCode).toBe(401);
    const fresh = await send(sendBody(other), authorised({ ...other, apiKey: rotated.key }));
    expect(fresh.statusCode).toBe(200);
  });

  it('stops accepting a revoked key', async () => {
    const other = await h.tenant();
    await h.admin.revokeKey(other.userId);
    const result = await send(sendBody(other), authorised(other));
    expect(result.statusCode).toBe(401);
    expect(result.headers['WWW-Authenticate']).toBe('Bearer error="invalid_token"');
  });
});

describe('authorisation (403)', () => {
  it('answers the same 403 for an unknown Organization and for one the caller is not in', async () => {
    const stranger = await h.tenant();
    const unknown = await send({ OrganizationId: '5f0c7c2e-8d1c-4a55-9a8e-0c3f5e2b9a10', Messages: [message()] });
    const notMember = await send({ OrganizationId: stranger.organizationId, Messages: [message()] });
    expectProblem(unknown, 403);
    expectProblem(notMember, 403);
    const { requestId: _a, ...unknownBody } = unknown.body;
    const { requestId: _b, ...notMemberBody } = notMember.body;
    expect(unknownBody).toEqual(notMemberBody);
    expect(await h.sentEmails()).toHaveLength(0);
  });

  it('answers 403 after the caller is removed from the Organization', async () => {
    const other = await h.tenant();
    await h.admin.removeMember(other.organizationId, other.userId);
    const result = await send(sendBody(other), authorised(other));
    expectProblem(result, 403);
  });

  it('answers 403 naming every message whose From is not allowed, and sends none of the request', async () => {
    const result = await send(
      sendBody(tenant, [message(), message({ From: 'ceo@evil.test' }), message({ From: 'someone@acme.test' })]),
    );
    expectProblem(result, 403);
    expect(result.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/Messages/1/From', '/Messages/2/From']);
    expect(await h.sentEmails()).toHaveLength(0);
  });

  it('does not let a subdomain pass for its parent domain', async () => {
    const result = await send(sendBody(tenant, [message({ From: 'x@mail.example.com' })]));
    expectProblem(result, 403);
  });
});

describe('routing (404, 405)', () => {
  it('answers 405 with Allow: POST for other methods on the path', async () => {
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
      const result = await h.invoke({ method, headers: authorised(tenant) });
      expectProblem(result, 405);
      expect(result.headers.Allow).toBe('POST');
    }
  });

  it('answers 404 for unknown paths', async () => {
    for (const path of ['/', '/v1.2/email', '/v1.1/email/send', '/v1.2/email/send/extra']) {
      const result = await h.invoke({ path, headers: authorised(tenant), body: sendBody(tenant) });
      expectProblem(result, 404);
    }
    expect(await h.sentEmails()).toHaveLength(0);
  });

  it('names in a 404 what is served near the path asked for, else the send path', async () => {
    const detail = async (path: string) => (await h.invoke({ method: 'GET', path, headers: authorised(tenant) })).body.detail as string;
    expect(await detail('/v1.2/templates/')).toBe('Nothing is served at /v1.2/templates/. Served nearby: GET /v1.2/templates; GET, PUT, DELETE /v1.2/templates/{Name}; POST /v1.2/templates/{Name}/render.');
    expect(await detail('/v1.2/email/sned')).toBe('Nothing is served at /v1.2/email/sned. Served nearby: POST /v1.2/email/send; POST /v1.2/email/status; POST /v1.2/email/cancel.');
    expect(await detail('/v1/send')).toBe('Nothing is served at /v1/send. Served nearby: POST /v1.2/email/send.');
  });
});
