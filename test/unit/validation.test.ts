import { describe, expect, it } from '@jest/globals';
import { validateSendRequest } from '../../functions/send/validation';
import { ValidationProblem } from '../../functions/shared/http/problems';
import { problemsOf as problemsIn } from '../support/send-validation';

const ORG = '5f0c7c2e-8d1c-4a55-9a8e-0c3f5e2b9a10';
const limits = { maxMessages: 100 };
const msg = (overrides: Record<string, unknown> = {}) => ({
  To: ['a@example.org'],
  From: 'noreply@example.com',
  Subject: 'Hi',
  TextContent: 'Body',
  ...overrides,
});

const problemsOf = (body: unknown) => problemsIn(body, limits);

const pointers = (body: unknown) => problemsOf(body).map((p) => p.pointer);

describe('validateSendRequest', () => {
  it('returns the normalised request for a valid body', () => {
    const request = validateSendRequest({ OrganizationId: ORG.toUpperCase(), Messages: [msg({ To: ['X@Bücher.DE'], DisplayName: 'Acme' })] }, limits);
    expect(request.organizationId).toBe(ORG);
    expect(request.organizationIdAsSent).toBe(ORG.toUpperCase());
    expect(request.messages[0]).toMatchObject({ index: 0, to: ['X@xn--bcher-kva.de'], displayName: 'Acme', subject: 'Hi', text: 'Body' });
  });

  it.each([
    ['an array', []],
    ['null', null],
    ['a string', 'hello'],
    ['a number', 42],
  ])('refuses a body that is %s', (_label, body) => {
    expect(pointers(body)).toEqual(['']);
  });

  it.each([
    ['not a UUID', 'acme'],
    ['a UUID without dashes', '5f0c7c2e8d1c4a559a8e0c3f5e2b9a10'],
    ['a braced UUID', `{${ORG}}`],
    ['a number', 12345],
  ])('refuses an OrganizationId that is %s', (_label, id) => {
    expect(pointers({ OrganizationId: id, Messages: [msg()] })).toEqual(['/OrganizationId']);
  });

  it('refuses an organizationId that is not a UUID under its own spelling', () => {
    expect(pointers({ organizationId: 'nope', Messages: [msg()] })).toEqual(['/organizationId']);
  });

  it.each([
    ['Messages missing', { OrganizationId: ORG }],
    ['Messages not an array', { OrganizationId: ORG, Messages: {} }],
    ['Messages empty', { OrganizationId: ORG, Messages: [] }],
  ])('refuses %s', (_label, body) => {
    expect(pointers(body)).toEqual(['/Messages']);
  });

  it('refuses a message that is not an object', () => {
    expect(pointers({ OrganizationId: ORG, Messages: [msg(), 'hello', null] })).toEqual(['/Messages/1', '/Messages/2']);
  });

  it('refuses a __proto__ key as an unknown field instead of using it', () => {
    const body = JSON.parse(`{"OrganizationId":"${ORG}","Messages":[{"To":["a@example.org"],"From":"n@example.com","Subject":"s","TextContent":"t","__proto__":{"polluted":true}}],"__proto__":{"x":1}}`);
    expect(problemsOf(body)).toEqual([
      { pointer: '/__proto__', detail: 'unknown field "__proto__"' },
      { pointer: '/Messages/0/__proto__', detail: 'unknown field "__proto__"' },
    ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses constructor and prototype keys as unknown fields', () => {
    expect(pointers({ OrganizationId: ORG, Messages: [msg({ constructor: 'x', prototype: {} })] })).toEqual([
      '/Messages/0/constructor',
      '/Messages/0/prototype',
    ]);
  });

  it('escapes JSON pointer characters in unknown field names', () => {
    expect(pointers({ OrganizationId: ORG, Messages: [msg()], 'a/b~c': 1 })).toEqual(['/a~1b~0c']);
  });

  it.each([
    ['To not an array', { To: 'a@example.org' }, '/Messages/0/To'],
    ['a recipient not a string', { To: [42] }, '/Messages/0/To/0'],
    ['an address with a display name', { To: ['Alice <a@example.org>'] }, '/Messages/0/To/0'],
    ['an address with a comment', { To: ['a(comment)@example.org'] }, '/Messages/0/To/0'],
    ['a non-ASCII local part', { To: ['zoë@example.org'] }, '/Messages/0/To/0'],
    ['a domain without a dot', { To: ['a@localhost'] }, '/Messages/0/To/0'],
    ['an IP literal domain', { To: ['a@[127.0.0.1]'] }, '/Messages/0/To/0'],
    ['an address over 254 characters', { To: [`${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.com`] }, '/Messages/0/To/0'],
    ['a bad Cc', { Cc: ['nope'] }, '/Messages/0/Cc/0'],
    ['CRLF inside a quoted local part of To', { To: ['"b\r\nBcc: evil@x.org"@example.org'] }, '/Messages/0/To/0'],
    ['a tab inside a quoted local part', { Cc: ['"a\tb"@example.org'] }, '/Messages/0/Cc/0'],
    ['a no-break space inside a quoted local part (not ASCII)', { To: ['"a\u00a0b"@example.org'] }, '/Messages/0/To/0'],
    ['an ideographic space inside a quoted local part (not ASCII)', { To: ['"a\u3000b"@example.org'] }, '/Messages/0/To/0'],
    ['a lone double quote as the local part', { To: ['"@example.org'] }, '/Messages/0/To/0'],
    ['CRLF inside a quoted local part of From', { From: '"a\r\nBcc: evil@x.org"@example.com' }, '/Messages/0/From'],
    ['a bad Bcc', { Bcc: ['ok@example.org', 'x@'] }, '/Messages/0/Bcc/1'],
    ['no recipients', { To: [] }, '/Messages/0/To'],
    ['From missing', { From: undefined }, '/Messages/0/From'],
    ['From not an address', { From: 'noreply' }, '/Messages/0/From'],
    ['From with a display name', { From: 'Acme <noreply@example.com>' }, '/Messages/0/From'],
    ['Subject missing', { Subject: undefined }, '/Messages/0/Subject'],
    ['Subject empty', { Subject: '' }, '/Messages/0/Subject'],
    ['Subject with CRLF', { Subject: 'Hi\r\nBcc: victim@example.org' }, '/Messages/0/Subject'],
    ['Subject with a tab', { Subject: 'Hi\tthere' }, '/Messages/0/Subject'],
    ['Subject with a NUL', { Subject: 'Hi\u0000' }, '/Messages/0/Subject'],
    ['Subject with a Unicode line separator', { Subject: 'Hi\u2028there' }, '/Messages/0/Subject'],
    ['Subject over 998 characters', { Subject: 'x'.repeat(999) }, '/Messages/0/Subject'],
    ['Subject not a string', { Subject: 7 }, '/Messages/0/Subject'],
    ['DisplayName with LF', { DisplayName: 'Acme\nX-Evil: 1' }, '/Messages/0/DisplayName'],
    ['DisplayName with DEL', { DisplayName: 'Acme\u007f' }, '/Messages/0/DisplayName'],
    ['DisplayName not a string', { DisplayName: ['Acme'] }, '/Messages/0/DisplayName'],
    ['no content', { TextContent: undefined }, '/Messages/0/TextContent'],
    ['empty content', { TextContent: '', HtmlContent: '' }, '/Messages/0/TextContent'],
    ['TextContent not a string', { TextContent: 5 }, '/Messages/0/TextContent'],
    ['HtmlContent not a string', { HtmlContent: { html: true } }, '/Messages/0/HtmlContent'],
    ['ExpirationDateTime impossible', { ExpirationDateTime: '2026-02-30 10:00:00' }, '/Messages/0/ExpirationDateTime'],
    ['ExpirationDateTime RFC 3339 without an offset', { ExpirationDateTime: '2026-01-01T10:00:00' }, '/Messages/0/ExpirationDateTime'],
    ['SendAt RFC 3339 with an impossible offset', { SendAt: '2026-01-01T10:00:00+25:00' }, '/Messages/0/SendAt'],
    ['ExpirationDateTime a number', { ExpirationDateTime: 1767261600 }, '/Messages/0/ExpirationDateTime'],
    ['a misspelt field', { Subjet: 'x' }, '/Messages/0/Subjet'],
    ['a lower-case field name', { to: ['a@example.org'] }, '/Messages/0/to'],
  ])('refuses %s', (_label, overrides, pointer) => {
    expect(pointers({ OrganizationId: ORG, Messages: [msg(overrides)] })).toContain(pointer);
  });

  it('accepts exactly 998 subject characters, counted as characters not UTF-16 units', () => {
    expect(() => validateSendRequest({ OrganizationId: ORG, Messages: [msg({ Subject: '😀'.repeat(998) })] }, limits)).not.toThrow();
  });

  it('reads ExpirationDateTime and SendAt in RFC 3339 with an offset as the instants they name, and says both shapes when refusing', () => {
    const now = Date.UTC(2026, 10, 24, 12);
    const request = validateSendRequest(
      { OrganizationId: ORG, Messages: [msg({ SendAt: '2026-11-25T10:00:00+02:00', ExpirationDateTime: '2026-11-25T08:30:00.5Z' })] },
      { ...limits, now },
    );
    expect(request.messages[0]).toMatchObject({ sendAt: Date.UTC(2026, 10, 25, 8), expiresAt: Date.UTC(2026, 10, 25, 8, 30, 0, 500) });
    // 10:00+02:00 is 08:00Z: not earlier than an expiry at 08:00:00Z.
    const late = problemsOf({ OrganizationId: ORG, Messages: [msg({ SendAt: '2026-11-25T10:00:00+02:00', ExpirationDateTime: '2026-11-25 08:00:00' })] });
    expect(late).toEqual([{ pointer: '/Messages/0/SendAt', detail: expect.stringContaining('earlier than') }]);
    const [problem] = problemsOf({ OrganizationId: ORG, Messages: [msg({ ExpirationDateTime: '2026-11-25T08:00:00' })] });
    expect(problem!.detail).toContain('YYYY-MM-DD HH:MM:SS');
    expect(problem!.detail).toContain('RFC 3339');
  });

  it('treats null optional fields as absent', () => {
    const request = validateSendRequest({ OrganizationId: ORG, Messages: [msg({ Cc: null, DisplayName: null, HtmlContent: null, ExpirationDateTime: null })] }, limits);
    expect(request.messages[0]).toMatchObject({ cc: [] });
    expect(request.messages[0]).not.toHaveProperty('displayName');
  });

  it('names a recipient list that is not an array once, not also as a message without recipients', () => {
    expect(problemsOf({ OrganizationId: ORG, Messages: [msg({ To: 'a@example.org' })] })).toEqual([{ pointer: '/Messages/0/To', detail: 'must be an array of email addresses' }]);
    expect(problemsOf({ OrganizationId: ORG, Messages: [msg({ To: undefined, Cc: { address: 'a@example.org' } })] })).toEqual([{ pointer: '/Messages/0/Cc', detail: 'must be an array of email addresses' }]);
    expect(problemsOf({ OrganizationId: ORG, Messages: [msg({ To: [], Cc: null })] })).toEqual([{ pointer: '/Messages/0/To', detail: 'at least one recipient is required in To, Cc or Bcc' }]);
  });

  it('reports only the count when a message has too many recipients, even 10 000', () => {
    const problems = problemsOf({ OrganizationId: ORG, Messages: [msg({ To: Array.from({ length: 10_000 }, () => 'bad') })] });
    expect(problems).toEqual([{ pointer: '/Messages/0', detail: expect.stringContaining('10000 recipients') }]);
  });

  it('reports only the count for 10 000 messages', () => {
    expect(problemsOf({ OrganizationId: ORG, Messages: Array.from({ length: 10_000 }, () => ({})) })).toEqual([
      { pointer: '/Messages', detail: expect.stringContaining('at most 100') },
    ]);
  });

  it('honours a configured message limit', () => {
    expect(() => validateSendRequest({ OrganizationId: ORG, Messages: [msg(), msg(), msg()] }, { maxMessages: 2 })).toThrow(ValidationProblem);
  });
});
