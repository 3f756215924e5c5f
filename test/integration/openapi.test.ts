/**
 * `openapi.json` against the code: a valid OpenAPI 3.1 document, every status of the contract
 * documented, every problem type and failure code of the code documented (and nothing the code
 * cannot produce), the request schema agreeing with the validation rules, every example valid
 * and every request example accepted by the real handler. That every response of every suite
 * matches the document is checked in the harness (`invoke`); the last block shows that check
 * catches drift.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { Validator } from '@seriousme/openapi-schema-validator';
import fc from 'fast-check';
import { parseExpiration } from '../../functions/send/expiry';
import { isStrictBase64 } from '../../functions/send/message-content';
import { UNSUPPORTED_EXTENSIONS, extensionOf } from '../../functions/send/file-names';
import { loadMessageContent } from '../../functions/send/content-fields';
import { loadContentTypes } from '../../functions/send/content-types';
import { validateSendRequest } from '../../functions/send/validation';
import { ALL_ROUTES } from '../../functions/shared/http/api-routes';
import { ValidationProblem } from '../../functions/shared/http/problems';
import { PAGE_METHODS } from '../../infra/local/gateway/problems';
import { FAILURE_CODES } from '../../functions/shared/mail/ports';
import type { Harness, Tenant } from '../support/harness';
import { authorised, useHarness } from '../support/harness';
import { compileSchema, openApiDocument as doc, openApiProblems, resolveRef } from '../support/openapi';
import { problemTypesInCode, settingsProblemTypesInCode } from '../support/problem-types';

// The send path loads the section 12 rules and the extension table before validating a request that
// needs them (functions/send/content-fields.ts, content-types.ts).
beforeAll(() => Promise.all([loadMessageContent(), loadContentTypes()]));

type Json = Record<string, any>;

const SEND = '/v1.2/email/send';
/** CONTRACT sections 1-6. */
const CONTRACT_STATUSES = [200, 207, 400, 401, 403, 404, 405, 409, 413, 415, 422, 429, 500, 502, 503];
const OTHER_METHODS = ['get', 'put', 'patch', 'delete', 'head', 'options', 'trace'];

const sendOperation: Json = doc.paths[SEND].post;
const requestMedia: Json = sendOperation.requestBody.content['application/json'];

/** The documented response for a status of the send endpoint (404: the generic one). */
function documentedResponse(status: number): Json | undefined {
  if (status === 404) return resolveRef(doc.components.responses.NotFound);
  if (status === 405) return resolveRef(doc.paths[SEND].get.responses['405']);
  const response = sendOperation.responses[String(status)];
  return response && resolveRef(response);
}

/** Every (location, status, response) the document holds, for the example checks. */
function allResponses(): { where: string; status: number; response: Json }[] {
  const found: { where: string; status: number; response: Json }[] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    for (const [method, operation] of Object.entries<Json>(item)) {
      if (!operation?.responses) continue;
      for (const [status, response] of Object.entries<Json>(operation.responses)) {
        found.push({ where: `${method.toUpperCase()} ${path} ${status}`, status: Number(status), response: resolveRef(response) });
      }
    }
  }
  // The answers no operation refers to: unknown paths, and other methods on the local pages.
  found.push({ where: 'components.responses.NotFound', status: 404, response: resolveRef(doc.components.responses.NotFound) });
  found.push({ where: 'x-local-page-method-not-allowed', status: 405, response: resolveRef(doc['x-local-page-method-not-allowed']) });
  return found;
}

/** Problem types documented at `status` on any settings API operation (`/v1.2/me…`). */
function settingsProblemTypesAt(status: number): string[] {
  return Object.entries<Json>(doc.paths)
    .filter(([path]) => path.startsWith('/v1.2/me'))
    .flatMap(([, item]) => Object.values<Json>(item))
    .flatMap((operation) => (operation.responses?.[String(status)] ? resolveRef(operation.responses[String(status)])['x-problem-types'] ?? [] : []));
}

describe('openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    // Unique operation ids, which the schema alone does not check.
    const ids = Object.values<Json>(doc.paths).flatMap((item) => Object.values<Json>(item).map((operation) => operation?.operationId).filter(Boolean));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('has schemas that compile in Ajv strict mode (no unknown keyword or format)', () => {
    for (const name of Object.keys(doc.components.schemas)) compileSchema({ $ref: `#/components/schemas/${name}` });
    for (const { response } of allResponses()) {
      for (const media of Object.values<Json>(response.content ?? {})) if (media.schema) compileSchema(media.schema);
    }
    compileSchema(requestMedia.schema);
  });

  it('documents every status of the contract for the send endpoint', () => {
    for (const status of CONTRACT_STATUSES) expect([status, documentedResponse(status) !== undefined]).toEqual([status, true]);
    for (const method of OTHER_METHODS) {
      expect(Object.keys(doc.paths[SEND][method].responses)).toEqual(['405']);
      expect(doc.paths[SEND][method].security).toEqual([]);
    }
  });

  it('gives no answer to HEAD a body (RFC 9110: a HEAD response has none)', () => {
    const heads = Object.values<Json>(doc.paths).flatMap((item) => (item.head ? Object.values<Json>(item.head.responses) : []));
    expect(heads.length).toBeGreaterThan(0);
    for (const response of heads.map((r) => resolveRef(r))) expect([response.description, response.content]).toEqual([response.description, undefined]);
    expect(Object.keys(resolveRef(doc.paths[SEND].head.responses['405']).headers)).toEqual(expect.arrayContaining(['Allow', 'X-Request-Id']));
  });

  it('documents the bearer scheme, the Idempotency-Key header and the local and AWS servers', () => {
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: expect.stringContaining('tme_') });
    expect(sendOperation.security).toEqual([{ apiKey: [] }]);
    const key = resolveRef(sendOperation.parameters[0]);
    expect(key).toMatchObject({ name: 'Idempotency-Key', in: 'header', required: false, schema: { minLength: 1, maxLength: 255 } });
    const validKey = compileSchema(key.schema);
    expect(['a', 'x'.repeat(255), ' ~'].every((value) => validKey(value))).toBe(true);
    expect(['', 'x'.repeat(256), 'é', 'a\tb'].some((value) => validKey(value))).toBe(false);
    expect(doc.servers.map((server: Json) => server.url)).toEqual(expect.arrayContaining(['http://127.0.0.1:3000', 'https://{apiId}.execute-api.{region}.amazonaws.com']));
  });

  it('documents every problem type the code produces, at its status, and none it cannot', () => {
    const inCode = problemTypesInCode();
    for (const { status, slug, from } of inCode) {
      expect({ slug, from, documentedAt: documentedResponse(status)?.['x-problem-types']?.includes(slug) ? status : 'nowhere' }).toEqual({ slug, from, documentedAt: status });
    }
    const settings = settingsProblemTypesInCode();
    for (const { status, slug, from } of settings) {
      expect({ slug, from, documentedAt: settingsProblemTypesAt(status).includes(slug) ? status : 'nowhere' }).toEqual({ slug, from, documentedAt: status });
    }
    // The settings API also answers the shared problems its function can raise (503 storage, 500).
    const shared = [{ status: 503, slug: 'storage-unavailable' }];
    const documented = allResponses().flatMap(({ status, response }) => (response['x-problem-types'] ?? []).map((slug: string) => `${status} ${slug}`));
    expect([...new Set(documented)].sort()).toEqual([...new Set([...inCode, ...settings, ...shared].map(({ status, slug }) => `${status} ${slug}`))].sort());
  });

  it('lists exactly the FAILURE_CODES as Error.Code, and exactly the throttling ones for a 429', () => {
    expect([...doc.components.schemas.FailureCode.enum].sort()).toEqual(Object.keys(FAILURE_CODES).sort());
    for (const code of Object.keys(FAILURE_CODES)) expect(doc.components.schemas.FailureCode.description).toContain(`\`${code}\``);
    const throttling = Object.entries(FAILURE_CODES).filter(([, rule]) => rule.throttling).map(([code]) => code);
    const only429 = doc.components.schemas.SendResults429.allOf[1].properties.Messages.items.properties.Error.properties.Code.enum;
    expect([...only429].sort()).toEqual(throttling.sort());
  });

  it('has every documented example valid against its schema, and problem examples of a documented type', () => {
    let checked = 0;
    for (const { where, status, response } of allResponses()) {
      for (const [mediaType, media] of Object.entries<Json>(response.content ?? {})) {
        for (const [name, example] of Object.entries<Json>(media.examples ?? {})) {
          const validate = compileSchema(media.schema);
          expect([where, name, validate(example.value) ? 'valid' : validate.errors]).toEqual([where, name, 'valid']);
          if (mediaType === 'application/problem+json') {
            expect(example.value.status).toBe(status);
            expect(response['x-problem-types']).toContain(example.value.type.replace(/^.*\/problems\//, ''));
          }
          checked++;
        }
      }
    }
    const validRequest = compileSchema(requestMedia.schema);
    for (const [name, example] of Object.entries<Json>(requestMedia.examples)) {
      expect([name, validRequest(example.value) ? 'valid' : validRequest.errors]).toEqual([name, 'valid']);
      checked++;
    }
    const key = resolveRef(sendOperation.parameters[0]);
    expect(compileSchema(key.schema)(key.example)).toBe(true);
    expect(checked).toBeGreaterThan(25);
  });
});

describe('the request schema and the validation code', () => {
  const validRequest = compileSchema(requestMedia.schema);
  const codeAccepts = (body: unknown): boolean => {
    try {
      validateSendRequest(body, { maxMessages: 100 });
      return true;
    } catch (error) {
      if (error instanceof ValidationProblem) return false;
      throw error;
    }
  };
  const ORG = '5f0c7c2e-8d1c-4a55-9a8e-0c3f5e2b9a10';
  const base = () => ({ From: 'noreply@example.com', To: ['alice@example.org'], Subject: 'Hi', TextContent: 'Body' });

  const text = fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom('', ' ', 'a\tb', 'a\r\nb', '\u2028', '\u0085', '\u007f', 'é ✓', 'x'.repeat(998), 'x'.repeat(999), '✓'.repeat(998), '✓'.repeat(999)) },
    fc.string({ maxLength: 6 }),
    fc.string({ unit: 'binary', maxLength: 6 }),
  );
  const address = fc.oneof(
    fc.constantFrom('a@example.org', 'kunde@bücher.de', 'not-an-address', 'A <a@example.org>', 'a@localhost', 'a@[127.0.0.1]', `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.io`, 'ü@example.org', '', ' a@example.org'),
    fc.emailAddress(),
  );
  const dateTime = fc.constantFrom('2099-12-31 23:59:59', '2020-01-01 00:00:00', '2099-12-31T23:59:59', '2099-12-31 23:59', ' 2099-12-31 23:59:59', '2028-02-29 12:00:00', '2099-12-31 23:59:59Z',
    '2099-12-31T23:59:59Z', '2099-12-31t23:59:59.123456789z', '2099-12-31 23:59:59-00:00', '2099-12-31T23:59:59.5+05:30', '2099-12-31T23:59:59+0200', '2099-12-31T23:59:59+24:00',
    '2099-12-31T23:59:59.1234567890Z', '2099-12-31T23:59:59.Z', '2099-12-31 23:59:59.5', '2026-02-30T10:00:00Z', '2026-12-31T23:59:60Z');
  const BASE64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const encoded = fc.uint8Array({ minLength: 1, maxLength: 7 }).map((bytes) => Buffer.from(bytes).toString('base64'));
  /** What an encoder writes; the same with its last character changed (non-zero unused bits, when padded); broken shapes. */
  const base64Content = fc.oneof(
    encoded,
    fc.tuple(encoded, fc.constantFrom(...BASE64_ALPHABET)).map(([text, last]) => {
      const at = text.replace(/=+$/, '').length - 1;
      return `${text.slice(0, at)}${last}${text.slice(at + 1)}`;
    }),
    fc.constantFrom('', 'QQ', 'QQ=', 'Q===', 'QQ==\n', 'QQ-_', 'QQ==QQ==', '====', 'QUJD\r\nREVG'),
  );
  const attachments = fc.oneof(
    fc.array(fc.record({
      FileName: fc.constantFrom('receipt.pdf', 'logo.png', 'ü 😀.png', '', 'a/b.pdf', 'a\\b.pdf', 'a\u2028b.pdf', 'invoice\u202Efdp.zip', 'a\u0600.pdf', 'a\uFFF9.pdf', 'a\u{110BD}.pdf', 'a\u{E0041}.pdf', 'setup.exe', 'setup.EXE. '),
      Content: fc.oneof({ weight: 4, arbitrary: base64Content }, fc.integer(), fc.constant(null)),
      ContentType: fc.constantFrom(null, 'application/pdf', 'image/png', 'multipart/mixed', 'Multipart/Alternative', 'message/rfc822', 'MESSAGE/partial', 'text/plain; charset=utf-8', 'multipart', 'application/multipart'),
    }, { requiredKeys: ['FileName', 'Content'] }), { minLength: 1, maxLength: 2 }),
    fc.constant(null),
  );
  const recipients = fc.oneof(fc.array(address, { maxLength: 3 }), fc.constant([]), fc.constant(null), address, fc.array(fc.oneof(fc.integer(), fc.constant(null)), { minLength: 1, maxLength: 2 }));
  const optionalText = fc.oneof(text, fc.constant(null), fc.integer(), fc.boolean());
  const FIELD_VALUES: Record<string, fc.Arbitrary<unknown>> = {
    To: recipients,
    Cc: recipients,
    Bcc: recipients,
    From: fc.oneof(address, fc.constant(null), fc.integer()),
    DisplayName: optionalText,
    Subject: fc.oneof({ weight: 2, arbitrary: fc.constantFrom('x'.repeat(998), 'x'.repeat(999), '✓'.repeat(998), '✓'.repeat(999), '', ' ') }, optionalText),
    TextContent: optionalText,
    HtmlContent: optionalText,
    ExpirationDateTime: fc.oneof(dateTime, fc.constant(null), fc.integer(), text),
    Attachments: attachments,
    Tracking: fc.oneof(
      fc.record({ Opens: fc.constantFrom(true, false, null, 'true', 1), Clicks: fc.constantFrom(true, false, null, 'false', 0) }, { requiredKeys: [] }),
      fc.constantFrom(null, true, 'on', [], { Opens: true, Pixel: true }, { opens: true }),
    ),
  };
  const anyValue = fc.oneof(text, fc.constant(null), fc.integer(), fc.array(text, { maxLength: 2 }), fc.dictionary(fc.string({ maxLength: 3 }), text, { maxKeys: 1 }));
  /** One or two fields of a valid message changed or removed (undefined), or an unknown field added: the near misses. */
  const edit = fc.oneof(
    ...Object.entries(FIELD_VALUES).map(([field, values]) => fc.tuple(fc.constant(field), fc.oneof(values, fc.constant(undefined)))),
    fc.tuple(fc.oneof(fc.string({ maxLength: 5 }), fc.constantFrom('to', 'Body', '__proto__')), anyValue),
  );
  /** Applies edits (a value, or undefined to remove the field) to a valid object. */
  const applyEdits = (valid: Json, edits: readonly (readonly [string, unknown])[]): Json => {
    for (const [field, value] of edits) {
      if (value === undefined) delete valid[field];
      else Object.defineProperty(valid, field, { value, enumerable: true, configurable: true, writable: true });
    }
    return valid;
  };
  const nearMiss = fc.array(edit, { minLength: 1, maxLength: 2 }).map((edits) => applyEdits(base(), edits));
  const organization = fc.constantFrom(undefined, ORG, ORG.toUpperCase(), null, 42, '5f0c7c2e8d1c4a559a8e0c3f5e2b9a10', '{5f0c7c2e-8d1c-4a55-9a8e-0c3f5e2b9a10}', '5F0C7C2E-8D1C-4A55-9A8E-0C3F5E2B9A1G');
  const topLevelEdit = fc.oneof(
    fc.tuple(fc.constant('OrganizationId'), organization),
    fc.tuple(fc.constant('organizationId'), organization),
    fc.tuple(fc.constant('Messages'), fc.constantFrom(undefined, [], null, {}, [42], [null], Array.from({ length: 100 }, base), Array.from({ length: 101 }, base))),
    fc.tuple(fc.oneof(fc.string({ maxLength: 5 }), fc.constantFrom('messages', 'Message', '__proto__')), anyValue),
  );
  const body = fc.oneof(
    { weight: 6, arbitrary: fc.array(fc.oneof({ weight: 3, arbitrary: nearMiss }, fc.constant(base())), { minLength: 1, maxLength: 2 }).map((Messages) => ({ OrganizationId: ORG, Messages })) },
    { weight: 3, arbitrary: fc.array(topLevelEdit, { minLength: 1, maxLength: 2 }).map((edits) => applyEdits({ OrganizationId: ORG, Messages: [base()] }, edits)) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  );

  /** A format character (Unicode category Cf) outside the Basic Multilingual Plane. */
  const ASTRAL_FORMAT = /(?![\u0000-\uFFFF])\p{Cf}/u;
  const TIME_SHAPE = new RegExp(doc.components.schemas.Message.properties.ExpirationDateTime.pattern, 'u');
  /** What the schema cannot say and the descriptions do: checked by the code only. */
  function beyondSchema(candidate: unknown): boolean {
    if (typeof candidate !== 'object' || candidate === null) return false;
    const { OrganizationId: upper, organizationId: lower, Messages } = candidate as Json;
    // Both spellings with different values.
    if (typeof upper === 'string' && typeof lower === 'string' && upper.toLowerCase() !== lower.toLowerCase()) return true;
    return (Array.isArray(Messages) ? Messages : []).some((message: Json) => {
      const when = message?.ExpirationDateTime;
      // A time of a shape the document admits that is not on the calendar (30 February, a leap second).
      if (typeof when === 'string' && TIME_SHAPE.test(when) && parseExpiration(when) === undefined) return true;
      // A file name with an extension on SES's list, or a format character beyond the Basic Multilingual Plane.
      return (Array.isArray(message?.Attachments) ? message.Attachments : []).some(({ FileName: name }: Json) =>
        typeof name === 'string' && (UNSUPPORTED_EXTENSIONS.has(extensionOf(name) ?? '') || ASTRAL_FORMAT.test(name)));
    });
  }

  it('accept and refuse the same bodies (apart from the rules only described in text)', () => {
    let accepted = 0;
    fc.assert(
      fc.property(body, (candidate) => {
        fc.pre(!beyondSchema(candidate));
        const byCode = codeAccepts(candidate);
        if (byCode) accepted++;
        expect({ candidate, schema: validRequest(candidate) }).toEqual({ candidate, schema: byCode });
      }),
      { numRuns: 3000 },
    );
    expect(accepted).toBeGreaterThan(300);
  });

  it('agree on every last group of an attachment\'s Content: the bits the padding leaves unused are zero', () => {
    const contentPattern = new RegExp(doc.components.schemas.Attachment.properties.Content.pattern, 'u');
    const groups = [...BASE64_ALPHABET].flatMap((a) => [...BASE64_ALPHABET].flatMap((b) => [`${a}${b}==`, `Q${a}${b}=`, `${a}${b}QQ`]));
    expect(groups.filter((group) => contentPattern.test(`QUJD${group}`) !== isStrictBase64(`QUJD${group}`))).toEqual([]);
    // Of each padded group only the encodings of whole bytes: 4 of 64 last characters for "==", 16 for "=".
    expect(groups.filter((group) => contentPattern.test(group))).toHaveLength(64 * 4 + 64 * 16 + 64 * 64);
  });

  it('agree on every character of the Basic Multilingual Plane in an attachment\'s FileName', () => {
    const fileNameShape = new RegExp(doc.components.schemas.Attachment.properties.FileName.pattern, 'u');
    const codes = Array.from({ length: 0x10000 }, (_, code) => code).filter((code) => code < 0xd800 || code > 0xdfff);
    const disagreeing: string[] = [];
    // A thousand names a request (100 messages of 10 attachments): the code's problems name the refused ones.
    for (let at = 0; at < codes.length; at += 1_000) {
      const chunk = codes.slice(at, at + 1_000);
      const Messages = Array.from({ length: Math.ceil(chunk.length / 10) }, (_, m) => ({
        ...base(),
        Attachments: chunk.slice(m * 10, m * 10 + 10).map((code) => ({ FileName: `a${String.fromCharCode(code)}b.pdf`, Content: 'QQ==' })),
      }));
      let refused = new Set<string>();
      try {
        validateSendRequest({ OrganizationId: ORG, Messages }, { maxMessages: 100 });
      } catch (error) {
        if (!(error instanceof ValidationProblem)) throw error;
        expect(error.errors?.length).toBeLessThan(100);
        refused = new Set(error.errors?.map(({ pointer }) => pointer));
      }
      chunk.forEach((code, i) => {
        const byCode = !refused.has(`/Messages/${Math.floor(i / 10)}/Attachments/${i % 10}/FileName`);
        if (fileNameShape.test(`a${String.fromCharCode(code)}b.pdf`) !== byCode) disagreeing.push(code.toString(16));
      });
    }
    expect(disagreeing).toEqual([]);
  });

  it.each([
    ['51 recipients (JSON Schema cannot sum To, Cc and Bcc)', { OrganizationId: ORG, Messages: [{ ...base(), To: Array(20).fill('a@example.org'), Cc: Array(20).fill('b@example.org'), Bcc: Array(11).fill('c@example.org') }] }],
    ['both spellings with different values', { OrganizationId: ORG, organizationId: '00000000-0000-4000-8000-000000000000', Messages: [base()] }],
    ['an impossible calendar date', { OrganizationId: ORG, Messages: [{ ...base(), ExpirationDateTime: '2026-02-30 10:00:00' }] }],
    ['an impossible calendar date in RFC 3339', { OrganizationId: ORG, Messages: [{ ...base(), ExpirationDateTime: '2026-02-30T10:00:00+01:00' }] }],
    ['a file type on SES\'s list (no pattern spells the list in every letter case)', { OrganizationId: ORG, Messages: [{ ...base(), Attachments: [{ FileName: 'setup.Exe', Content: 'QQ==' }] }] }],
    ['a format character beyond the Basic Multilingual Plane in a FileName', { OrganizationId: ORG, Messages: [{ ...base(), Attachments: [{ FileName: 'a\u{E0041}.pdf', Content: 'QQ==' }] }] }],
  ])('leave to the description: %s (schema-valid, refused by the code)', (_rule, candidate) => {
    expect(validRequest(candidate)).toBe(true);
    expect(codeAccepts(candidate)).toBe(false);
  });
});

describe('the request examples, sent to the real handler', () => {
  let h!: Harness;
  let tenant!: Tenant;
  useHarness((harness, first) => {
    h = harness;
    tenant = first;
  });

  /** The example with the tenant's Organization (keeping the example's letter case); its From addresses are @example.com, a sender of the tenant. */
  function forTenant(example: Json): Json {
    const body = structuredClone(example);
    for (const field of ['OrganizationId', 'organizationId']) {
      if (typeof body[field] === 'string') body[field] = body[field] === body[field].toUpperCase() ? tenant.organizationId.toUpperCase() : tenant.organizationId;
    }
    for (const message of body.Messages) expect(message.From).toMatch(/@example\.com$/);
    return body;
  }

  it.each(Object.keys(requestMedia.examples))('accepts the "%s" example: 200, one result per message', async (name) => {
    const example = requestMedia.examples[name].value;
    await h.clearEmails();
    // The harness checks the response against the document as well.
    const result = await h.invoke({ headers: authorised(tenant), body: forTenant(example) });
    expect([result.statusCode, result.rawBody]).toEqual([200, expect.any(String)]);
    expect(result.body.Messages.map((m: Json) => m.Index)).toEqual(example.Messages.map((_: unknown, i: number) => i));
    const sent = result.body.Messages.filter((m: Json) => m.Status === 'Sent').length;
    expect(await h.sentEmails()).toHaveLength(sent);
  });
});

describe('the response check (test/support/openapi.ts)', () => {
  const ok = { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', 'X-Request-Id': 'r-1' };
  const problem = { ...ok, 'Content-Type': 'application/problem+json' };
  const results = (Messages: unknown[]) => JSON.stringify({ OrganizationId: 'x', Messages });
  const problemBody = (status: number, slug: string, extra: Json = {}) =>
    JSON.stringify({ type: `https://email-send-api.example/problems/${slug}`, title: 'T', status, detail: 'D', requestId: 'r-1', ...extra });
  const check = (status: number, headers: Json, body: string, method = 'POST', path = SEND) => openApiProblems({ method, path, status, headers, body });
  /** An answer of the local stack to POST /docs, a page that serves GET and HEAD. */
  const local = (status: number, headers: Json, body: string) => openApiProblems({ method: 'POST', path: '/docs', status, headers, body, localStack: true });

  it('accepts what the service sends', () => {
    expect(check(200, ok, results([{ Index: 0, Status: 'Sent', MessageId: 'm' }]))).toEqual([]);
    expect(check(422, ok, results([{ Index: 0, Status: 'Failed', Error: { Code: 'Suppressed', Message: 'm', Retryable: false } }, { Index: 1, Status: 'Expired' }]))).toEqual([]);
    expect(check(422, problem, problemBody(422, 'idempotency-key-reused'))).toEqual([]);
    expect(check(502, ok, results([{ Index: 0, Status: 'Failed', Error: { Code: 'Suppressed', Message: 'm', Retryable: false } }, { Index: 1, Status: 'Failed', Error: { Code: 'Throttled', Message: 'm', Retryable: true } }]))).toEqual([]);
    expect(check(401, { ...problem, 'WWW-Authenticate': 'Bearer error="invalid_token"' }, problemBody(401, 'invalid-token'))).toEqual([]);
    expect(check(404, problem, problemBody(404, 'not-found'), 'GET', '/nothing/here')).toEqual([]);
    expect(openApiProblems({ method: 'GET', path: '/', status: 200, headers: { 'cache-control': 'no-store', 'content-type': 'application/json' }, body: '{"ready":true}', localStack: true })).toEqual([]);
    expect(local(405, { ...problem, Allow: 'GET, HEAD' }, problemBody(405, 'method-not-allowed'))).toEqual([]);
    // A method a path does not list: the generic 405, naming what the path serves.
    expect(check(405, { ...problem, Allow: 'GET, DELETE' }, problemBody(405, 'method-not-allowed'), 'PUT', '/v1.2/me/suppressions')).toEqual([]);
    expect(check(405, { ...problem, Allow: 'GET' }, '', 'HEAD', '/v1.2/me')).toEqual([]);
  });

  it('takes the local gateway\'s own answers on any path of the local stack, and only there', () => {
    const starting = problemBody(503, 'starting');
    const gateway = (path: string, localStack = true) => openApiProblems({ method: 'GET', path, status: 503, headers: { ...problem, 'Retry-After': '1' }, body: starting, localStack });
    for (const path of ['/settings', '/v1.2/me', '/nothing/here']) expect([path, gateway(path)]).toEqual([path, []]);
    expect(gateway('/settings', false)).not.toEqual([]);
    const misdirected = openApiProblems({ method: 'PUT', path: '/v1.2/templates/welcome', status: 421, headers: problem, body: problemBody(421, 'misdirected-request'), localStack: true });
    expect(misdirected).toEqual([]);
    // Only the gateway's own problems: a handler's 400 on a path that documents none is still refused.
    expect(openApiProblems({ method: 'GET', path: '/settings', status: 400, headers: problem, body: problemBody(400, 'validation'), localStack: true })).not.toEqual([]);
  });

  it('lets Allow name exactly the method lists the API serves (api-routes.ts) and its pages', () => {
    const lists = new Set([...ALL_ROUTES.map((route) => route.methods.join(', ')), PAGE_METHODS.join(', ')]);
    expect([...resolveRef(doc.components.headers.Allow).schema.enum].sort()).toEqual([...lists].sort());
  });

  it.each([
    ['a 200 result without MessageId', () => check(200, ok, results([{ Index: 0, Status: 'Sent' }]))],
    ['a 200 with a failed message', () => check(200, ok, results([{ Index: 0, Status: 'Failed', Error: { Code: 'Throttled', Message: 'm', Retryable: true } }]))],
    ['a failure code the document does not know', () => check(502, ok, results([{ Index: 0, Status: 'Failed', Error: { Code: 'Nope', Message: 'm', Retryable: true } }]))],
    ['a 429 for a non-throttling failure', () => check(429, { ...ok, 'Retry-After': '1' }, results([{ Index: 0, Status: 'Failed', Error: { Code: 'MessageRejected', Message: 'm', Retryable: false } }]))],
    ['a 422 for a failure Amazon SES caused', () => check(422, ok, results([{ Index: 0, Status: 'Failed', Error: { Code: 'SesUnavailable', Message: 'm', Retryable: true } }]))],
    ['a 502 when the request alone was at fault', () => check(502, ok, results([{ Index: 0, Status: 'Failed', Error: { Code: 'Suppressed', Message: 'm', Retryable: false } }, { Index: 1, Status: 'Failed', Error: { Code: 'MessageRejected', Message: 'm', Retryable: false } }]))],
    ['a 429 without Retry-After', () => check(429, ok, results([{ Index: 0, Status: 'Failed', Error: { Code: 'Throttled', Message: 'm', Retryable: true } }]))],
    ['a Retry-After that is not seconds', () => check(503, { ...problem, 'Retry-After': 'soon' }, problemBody(503, 'storage-unavailable'))],
    ['a 401 without WWW-Authenticate', () => check(401, problem, problemBody(401, 'unauthorized'))],
    ['a 405 without Allow', () => check(405, problem, problemBody(405, 'method-not-allowed'), 'GET')],
    ['a response without X-Request-Id', () => check(415, { 'Content-Type': 'application/problem+json', 'Cache-Control': 'no-store' }, problemBody(415, 'unsupported-media-type'))],
    ['a problem of a type not documented at its status', () => check(400, problem, problemBody(400, 'not-found'))],
    ['a problem with an undocumented member', () => check(400, problem, problemBody(400, 'validation', { stack: 'Error: …' }))],
    ['a problem sent as application/json', () => check(400, ok, problemBody(400, 'validation'))],
    ['a status the operation does not document', () => check(418, problem, problemBody(418, 'validation'))],
    ['anything but a 404 on an unknown path', () => check(200, ok, results([]), 'POST', '/v1.2/email/sned')],
    ['a local-only path answered by the Lambda handler', () => check(200, { 'content-type': 'application/json' }, '{"ready":true}', 'GET', '/')],
    ['a 404 to another method on a local page (the page exists)', () => local(404, problem, problemBody(404, 'not-found'))],
    ['a 405 on a local page that names POST in Allow', () => local(405, { ...problem, Allow: 'POST' }, problemBody(405, 'method-not-allowed'))],
    ['a 405 whose Allow is no method list the API serves', () => check(405, { ...problem, Allow: 'PATCH' }, problemBody(405, 'method-not-allowed'), 'PUT', '/v1.2/me')],
    ['a 405 whose Allow is another path\'s', () => check(405, { ...problem, Allow: 'GET, PUT, DELETE' }, problemBody(405, 'method-not-allowed'), 'PUT', '/v1.2/me')],
    ['a 405 on the send path that does not name POST', () => check(405, { ...problem, Allow: 'GET' }, problemBody(405, 'method-not-allowed'), 'GET')],
    ['a 405 to HEAD on a page, which serves HEAD', () => check(405, { ...problem, Allow: 'GET, HEAD' }, '', 'HEAD', '/settings')],
    ['a 200 to HEAD on a path that serves no HEAD', () => check(200, ok, '', 'HEAD', '/v1.2/me')],
  ])('refuses %s', (_label, problems) => {
    expect(problems()).not.toEqual([]);
  });
});
