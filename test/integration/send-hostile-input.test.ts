/**
 * Hostile and malformed input through the real handler, dynalite and the SES emulator (CONTRACT
 * sections 2 and 3): a caller without a valid key costs nothing and learns nothing, no answer
 * grows with what a request holds, ill-formed text never reaches SES, and nothing is ever sent
 * for a refused request.
 */
import { beforeEach, describe, expect, it, jest } from '@jest/globals';
import { generateApiKey } from '../../functions/shared/domain/api-keys';
import type { Harness, InvokeResult, Tenant } from '../support/harness';
import { authorised, message, sendBody, useHarness } from '../support/harness';

let h!: Harness;
let tenant!: Tenant;

useHarness((harness, first) => {
  h = harness;
  tenant = first;
});
beforeEach(async () => h.clearEmails());

/** Every answer here must stay small, whatever the request held. */
const SMALL = 64 * 1024;

function expectSmallProblem(result: InvokeResult, status: number): void {
  expect(result.statusCode).toBe(status);
  expect(result.headers['Content-Type']).toBe('application/problem+json');
  expect(result.rawBody.length).toBeLessThan(SMALL);
}

/** 200 KB of nesting, every level holding the same key twice: what used to cost 20 MB answers. */
function hostileBody(): string {
  const depth = 5_000;
  return `${'{"a":1,"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

const raw = (body: string, headers: Record<string, string> = authorised(tenant)) => h.invoke({ headers, body });

describe('authentication comes before the body', () => {
  it('answers 401 to a forged key (right shape and checksum) whatever the body holds, and small', async () => {
    const forged = { ...authorised(tenant), authorization: `Bearer ${generateApiKey()}` };
    for (const body of [hostileBody(), '{not json', '[]', JSON.stringify(sendBody(tenant))]) {
      const result = await raw(body, forged);
      expectSmallProblem(result, 401);
      expect(result.headers['WWW-Authenticate']).toBe('Bearer error="invalid_token"');
    }
    expect(await h.sentEmails()).toHaveLength(0);
  });

  it('answers 401 to a 5 MB body of attachments from a forged key without parsing it, and sends nothing', async () => {
    const forged = { ...authorised(tenant), authorization: `Bearer ${generateApiKey()}` };
    const attachment = { FileName: 'a.pdf', Content: Buffer.alloc(370_000, 1).toString('base64') };
    const body = JSON.stringify(sendBody(tenant, Array.from({ length: 10 }, () => message({ Attachments: [attachment] }))));
    expect(body.length).toBeGreaterThan(4_900_000);
    expect(body.length).toBeLessThan(h.config.maxBodyBytes);
    const parse = jest.spyOn(JSON, 'parse');
    try {
      const result = await raw(body, forged);
      expectSmallProblem(result, 401);
      // No work on the body: it was never parsed (the answer itself is parsed by the harness, and small).
      expect(parse.mock.calls.filter(([text]) => typeof text === 'string' && text.length > SMALL)).toEqual([]);
    } finally {
      parse.mockRestore();
    }
    expect(await h.sentEmails()).toHaveLength(0);
  });

  it('refuses nesting deeper than 32 levels from a valid caller, before scanning it', async () => {
    const result = await raw(hostileBody());
    expectSmallProblem(result, 400);
    expect(result.body).toMatchObject({ type: expect.stringMatching(/malformed-json$/), detail: expect.stringContaining('32 levels') });
  });
});

describe('problem lists are bounded', () => {
  it('lists the first 100 problems and counts them all', async () => {
    const messages = Array.from({ length: 100 }, () => message({ To: Array.from({ length: 50 }, (_, i) => `bad-${i}`) }));
    const result = await h.invoke({ headers: authorised(tenant), body: sendBody(tenant, messages) });
    expectSmallProblem(result, 400);
    expect(result.body.errors).toHaveLength(100);
    expect(result.body.detail).toBe('5000 problems found; the first 100 are listed');
    expect(result.body.errors[0]).toEqual({ pointer: '/Messages/0/To/0', detail: 'not a valid email address' });
  });

  it('cuts a pointer that repeats a huge field name', async () => {
    const name = 'x'.repeat(200_000);
    const result = await raw(`{"OrganizationId":"${tenant.organizationId}","Messages":[${JSON.stringify(message())}],"${name}":1}`);
    expectSmallProblem(result, 400);
    const [problem] = result.body.errors as { pointer: string }[];
    expect(problem!.pointer.length).toBeLessThanOrEqual(300);
    expect(problem!.pointer.startsWith('/xxx')).toBe(true);
  });
});

describe('well-formed text only', () => {
  // A lone surrogate can only be written as a JSON escape: each case is the raw body text.
  const withField = (pointer: string, messageJson: string) => ({ pointer, messageJson });
  const templated = (variables: string) => `{"From":"noreply@example.com","To":["alice@example.org"],"Template":{"Name":"welcome","Variables":${variables}}}`;
  const base = (overrides: string) => `{"From":"noreply@example.com","To":["alice@example.org"],"Subject":"Hi","TextContent":"Body"${overrides}}`;
  const cases = [
    withField('/Messages/0/Subject', base(',"Subject":"Hi \\ud800"').replace('"Subject":"Hi",', '')),
    withField('/Messages/0/DisplayName', base(',"DisplayName":"Acme \\udc00"')),
    withField('/Messages/0/TextContent', base(',"TextContent":"x\\ud800"').replace('"TextContent":"Body",', '').replace('"TextContent":"Body"', '"HtmlContent":"<p>ok</p>"')),
    withField('/Messages/0/HtmlContent', base(',"HtmlContent":"<p>\\ud83d</p>"')),
    withField('/Messages/0/From', base('').replace('"noreply@example.com"', '"noreply\\ud800@example.com"')),
    withField('/Messages/0/To/0', base('').replace('"alice@example.org"', '"alice@exa\\ud800mple.org"')),
    withField('/Messages/0/ExpirationDateTime', base(',"ExpirationDateTime":"2099-01-01 00:00:0\\ud800"')),
    // In a template's variables too, used or not, at any depth, and in a variable's name (CONTRACT section 2: any field).
    withField('/Messages/0/Template/Variables/unused', templated('{"unused":"x\\ud800"}')),
    withField('/Messages/0/Template/Variables/order/a~1b/1', templated('{"order":{"a/b":["ok","\\udc00"]}}')),
    // The pointer names the field with U+FFFD in place of the lone half: an answer holds none (I-JSON).
    withField('/Messages/0/Template/Variables/x\ufffd', templated('{"x\\udc00":"ok"}')),
  ];

  it.each(cases)('answers 400 naming $pointer for a lone surrogate, and sends nothing', async ({ pointer, messageJson }) => {
    const result = await raw(`{"OrganizationId":"${tenant.organizationId}","Messages":[${messageJson}]}`);
    expectSmallProblem(result, 400);
    expect(result.body.errors).toContainEqual({ pointer, detail: expect.stringContaining('well-formed Unicode') });
    expect(await h.sentEmails()).toHaveLength(0);
  });

  it('never quotes a lone surrogate back: an unknown field, a header name or a tag name holding one is named with U+FFFD', async () => {
    const messageJson = base(',"Headers":{"X-A\\ud800":"v"},"Tags":{"t\\udfff":"v"},"Foo\\udc00":1');
    const result = await raw(`{"OrganizationId":"${tenant.organizationId}","Messages":[${messageJson}],"Bar\\ud800":1}`);
    expectSmallProblem(result, 400);
    const text = JSON.stringify(result.body);
    expect(text).not.toMatch(/\\ud[89a-f]/i);
    expect(result.body.errors).toEqual(expect.arrayContaining([{ pointer: '/Messages/0/Foo\ufffd', detail: 'unknown field "Foo\ufffd"' }, expect.objectContaining({ pointer: '/Bar\ufffd' })]));
    expect(await h.sentEmails()).toHaveLength(0);
  });

  it('never quotes half a pair of a body that is not JSON: the parser\'s snippet is made well-formed', async () => {
    // JSON.parse's message quotes a few characters around the error, and its cut splits an emoji.
    const result = await raw(`{"Subject": x${'\u{1F600}'.repeat(30)}}`);
    expectSmallProblem(result, 400);
    expect(result.body.type).toMatch(/\/malformed-json$/);
    expect(String(result.body.detail)).toContain('\u{1F600}');
    expect(JSON.stringify(result.body)).not.toMatch(/\\ud[89a-f]/i);
  });

  it('sends astral characters (a pair, not a lone half) unchanged', async () => {
    const result = await h.invoke({ headers: authorised(tenant), body: sendBody(tenant, [message({ Subject: 'Launch 🚀', DisplayName: 'Acme 🚀' })]) });
    expect(result.statusCode).toBe(200);
    const [email] = await h.sentEmails();
    expect(email!.subject).toBe('Launch 🚀');
  });
});

describe('display names and quoted local parts', () => {
  it('takes a display name of 256 characters and refuses one of 257', async () => {
    const ok = await h.invoke({ headers: authorised(tenant), body: sendBody(tenant, [message({ DisplayName: 'é'.repeat(256) })]) });
    expect(ok.statusCode).toBe(200);
    const tooLong = await h.invoke({ headers: authorised(tenant), body: sendBody(tenant, [message({ DisplayName: 'é'.repeat(257) })]) });
    expectSmallProblem(tooLong, 400);
    expect(tooLong.body.errors).toEqual([{ pointer: '/Messages/0/DisplayName', detail: 'must be at most 256 characters' }]);
  });

  it.each(['"ceo@victim.com"@example.com', '"a<b>"@example.com', '"x,y"@example.com'])(
    'refuses the quoted local part in %s, which could pass for another address',
    async (address) => {
      const result = await h.invoke({ headers: authorised(tenant), body: sendBody(tenant, [message({ From: address }), message({ To: [address] })]) });
      expectSmallProblem(result, 400);
      expect(result.body.errors).toEqual([
        { pointer: '/Messages/0/From', detail: 'not a valid email address' },
        { pointer: '/Messages/1/To/0', detail: 'not a valid email address' },
      ]);
      expect(await h.sentEmails()).toHaveLength(0);
    },
  );

  it('still takes a quoted local part without those characters', async () => {
    const result = await h.invoke({ headers: authorised(tenant), body: sendBody(tenant, [message({ To: ['"john smith"@example.org'] })]) });
    expect(result.statusCode).toBe(200);
  });
});

describe('idempotent retries of the same request', () => {
  it('treats another spelling of the Organization id, an upper-case UUID and a null Cc as the same request', async () => {
    const key = `same-${Date.now()}`;
    const headers = authorised(tenant, { 'idempotency-key': key });
    const first = await h.invoke({ headers, body: { OrganizationId: tenant.organizationId, Messages: [message()] } });
    expect(first.statusCode).toBe(200);
    for (const body of [
      { organizationId: tenant.organizationId, Messages: [message()] },
      { OrganizationId: tenant.organizationId.toUpperCase(), Messages: [message()] },
      { OrganizationId: tenant.organizationId, Messages: [message({ Cc: null })] },
    ]) {
      const retry = await h.invoke({ headers, body });
      expect(retry.statusCode).toBe(200);
      expect(retry.headers['Idempotent-Replayed']).toBe('true');
      expect(retry.body).toEqual(first.body);
    }
    expect(await h.sentEmails()).toHaveLength(1);
    const different = await h.invoke({ headers, body: sendBody(tenant, [message({ Subject: 'Another' })]) });
    expect(different.statusCode).toBe(422);
  });
});
