/**
 * Reading the JSON body, in two steps with the caller's authentication between them (CONTRACT
 * section 3: the key is checked before the body is read beyond its size and media type):
 *
 * - `bodyLimits`: the size limit (before anything else looks at the body), then the media type;
 * - `jsonBody`: decoding, the nesting limit, the parse itself and the duplicate-key check. The
 *   parsed value is left in `event.jsonBody`; the raw string is not touched.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { MAX_LISTED_PROBLEMS, MalformedJsonProblem, PayloadTooLargeProblem, UnsupportedMediaTypeProblem, ValidationProblem } from '../problems';
import { duplicateKeyPointers, exceedsNesting } from '../json-duplicates';

export type JsonEvent = APIGatewayProxyEventV2 & { jsonBody?: unknown };

/** Far deeper than any valid request (5 levels, with attachments), far shallower than what costs memory to scan. */
export const MAX_NESTING_DEPTH = 32;

// application/json, optionally with a UTF-8 charset parameter (CONTRACT section 1); RFC 9110
// allows an empty parameter, so a trailing ";" is accepted too.
const JSON_MEDIA_TYPE = /^application\/json\s*(;\s*(charset\s*=\s*"?utf-8"?\s*)?)?$/i;
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function bodyLimits(options: { readonly maxBytes: number }): middy.MiddlewareObj<APIGatewayProxyEventV2> {
  const { maxBytes } = options;
  const bodyLimitsBefore: middy.MiddlewareFn<APIGatewayProxyEventV2> = async ({ event }) => {
    const bytes = Buffer.byteLength(event.body ?? '', event.isBase64Encoded ? 'base64' : 'utf8');
    if (bytes > maxBytes) throw new PayloadTooLargeProblem(maxBytes);
    const contentType = event.headers?.['content-type'];
    if (contentType === undefined || !JSON_MEDIA_TYPE.test(contentType.trim())) throw new UnsupportedMediaTypeProblem();
  };
  return { before: bodyLimitsBefore };
}

export function jsonBody(): middy.MiddlewareObj<JsonEvent> {
  const jsonBodyBefore: middy.MiddlewareFn<JsonEvent> = async ({ event }) => {
    let text = event.body ?? '';
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
    try {
      // JSON.parse makes "__proto__" an ordinary own key, never a prototype: validation then
      // reports it as an unknown field.
      event.jsonBody = JSON.parse(text);
    } catch (error) {
      throw new MalformedJsonProblem(`The request body is not valid JSON: ${(error as Error).message.slice(0, 200)}`, { cause: error });
    }
    // Checked on valid JSON only, and before the duplicate-key scan, whose cost grows with depth.
    if (exceedsNesting(text, MAX_NESTING_DEPTH)) {
      throw new MalformedJsonProblem(`The request body is nested deeper than ${MAX_NESTING_DEPTH} levels; a valid request has at most 5.`);
    }
    const duplicates = duplicateKeyPointers(text, MAX_LISTED_PROBLEMS);
    if (duplicates.total > 0) {
      throw new ValidationProblem(
        duplicates.pointers.map((pointer) => ({ pointer, detail: 'duplicate key: give each field once' })),
        { total: duplicates.total },
      );
    }
  };
  return { before: jsonBodyBefore };
}
