/**
 * Reading the JSON body, in steps with the caller's authentication between them (CONTRACT
 * section 3: the key is checked before the body is read beyond its size and media type):
 *
 * - `bodyLimits`: the size limit (before anything else looks at the body), then the media type;
 * - `jsonBody`, after the key, three middlewares in a row:
 *   1. `jsonText`: what must hold before a parse — no content coding, strict UTF-8, no byte order
 *      mark, not empty. It keeps the text in `event.rawBody` and hands the parser plain text;
 *   2. `@middy/http-json-body-parser`: the parse itself, leaving the value in `event.body`. Its
 *      errors become the `malformed-json` problem document (`jsonText`'s `onError`);
 *   3. `jsonShape`: what JSON.parse cannot see, scanned on the kept text — the nesting limit, then
 *      duplicate keys.
 */
import type middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { MAX_LISTED_PROBLEMS, MalformedJsonProblem, PayloadTooLargeProblem, UnsupportedMediaTypeProblem, ValidationProblem } from '../problems';
import { duplicateKeyPointers, exceedsNesting } from '../json-duplicates';
import { isEncoded, isJsonMediaType } from '../media-type';

/** The event once the body is read: `body` the parsed JSON value, `rawBody` the text it was parsed from. */
export type JsonEvent = Omit<APIGatewayProxyEventV2, 'body'> & { body?: unknown; rawBody?: string };

/** Far deeper than a written message needs (5 levels, with attachments), room for a template's Variables, far shallower than what costs memory to scan. */
export const MAX_NESTING_DEPTH = 32;

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const PARSER_PACKAGE = '@middy/http-json-body-parser';

export function bodyLimits(options: { readonly maxBytes: number }): middy.MiddlewareObj<APIGatewayProxyEventV2> {
  const { maxBytes } = options;
  const bodyLimitsBefore: middy.MiddlewareFn<APIGatewayProxyEventV2> = async ({ event }) => {
    const bytes = Buffer.byteLength(event.body ?? '', event.isBase64Encoded ? 'base64' : 'utf8');
    if (bytes > maxBytes) throw new PayloadTooLargeProblem(maxBytes);
    if (!isJsonMediaType(event.headers?.['content-type'])) throw new UnsupportedMediaTypeProblem();
  };
  return { before: bodyLimitsBefore };
}

function jsonText(): middy.MiddlewareObj<JsonEvent> {
  const jsonTextBefore: middy.MiddlewareFn<JsonEvent> = async ({ event }) => {
    // A compressed body would read as bytes that are not UTF-8 (400): name the real cause. After
    // the key, as everything about the body but its size and media type (CONTRACT section 3).
    const contentEncoding = event.headers?.['content-encoding'];
    if (isEncoded(contentEncoding)) throw new UnsupportedMediaTypeProblem({ contentEncoding: contentEncoding.trim() });
    let text = typeof event.body === 'string' ? event.body : '';
    if (event.isBase64Encoded) {
      try {
        text = STRICT_UTF8.decode(Buffer.from(text, 'base64'));
      } catch (error) {
        // Replacing bad bytes with U+FFFD would send mail that differs from what was asked for.
        throw new MalformedJsonProblem('The request body is not valid UTF-8.', { cause: error });
      }
    }
    // RFC 8259 lets a parser ignore a leading byte order mark; some clients write one.
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (text.trim() === '') throw new MalformedJsonProblem('The request body is empty; send a JSON object.');
    // The parser decodes base64 leniently (bad bytes become U+FFFD), so it gets the checked text.
    event.rawBody = text;
    event.body = text;
    event.isBase64Encoded = false;
  };
  const jsonTextOnError: middy.MiddlewareFn<JsonEvent> = async (request) => {
    const cause = (request.error as { cause?: { package?: unknown; message?: unknown } } | null)?.cause;
    if (cause?.package !== PARSER_PACKAGE) return;
    // The parser answers 415 with its own words; a body of the right media type that is not JSON is
    // this service's 400, with what JSON.parse said (never the body, which the parser's cause holds).
    request.error = new MalformedJsonProblem(`The request body is not valid JSON: ${String(cause.message).slice(0, 200)}`);
  };
  return { before: jsonTextBefore, onError: jsonTextOnError };
}

function jsonShape(): middy.MiddlewareObj<JsonEvent> {
  const jsonShapeBefore: middy.MiddlewareFn<JsonEvent> = async ({ event }) => {
    const text = event.rawBody ?? '';
    // Checked on valid JSON only, and before the duplicate-key scan, whose cost grows with depth.
    if (exceedsNesting(text, MAX_NESTING_DEPTH)) {
      throw new MalformedJsonProblem(`The request body is nested deeper than ${MAX_NESTING_DEPTH} levels, the most any request may use (a written message needs 5; a template's Variables may use the rest).`);
    }
    const duplicates = duplicateKeyPointers(text, MAX_LISTED_PROBLEMS);
    if (duplicates.total > 0) {
      throw new ValidationProblem(
        duplicates.pointers.map((pointer) => ({ pointer, detail: 'duplicate key: give each field once' })),
        { total: duplicates.total },
      );
    }
  };
  return { before: jsonShapeBefore };
}

/**
 * The parser's options: its own media-type check is off, because `bodyLimits` made a stricter one
 * (UTF-8 only) before the key, and the parser's pattern would refuse what that one rightly admits
 * (`Application/JSON`, `application/json ; charset=utf-8`). Its typings omit the option it reads.
 */
const PARSER_OPTIONS: Parameters<typeof httpJsonBodyParser>[0] & { readonly disableContentTypeCheck: boolean } = { disableContentTypeCheck: true };

export function jsonBody(): middy.MiddlewareObj<JsonEvent>[] {
  // JSON.parse makes "__proto__" an ordinary own key, never a prototype: validation then reports
  // it as an unknown field.
  return [jsonText(), httpJsonBodyParser(PARSER_OPTIONS) as middy.MiddlewareObj<JsonEvent>, jsonShape()];
}
