/**
 * Reads the JSON body: the size limit first (before any parsing), then the media type, then the
 * parse itself. The parsed value is left in `event.jsonBody`; the raw string is not touched.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { MalformedJsonProblem, PayloadTooLargeProblem, UnsupportedMediaTypeProblem, ValidationProblem } from '../problems';
import { duplicateKeyPointers } from '../json-duplicates';

export type JsonEvent = APIGatewayProxyEventV2 & { jsonBody?: unknown };

export interface JsonBodyOptions {
  readonly maxBytes: number;
}

// application/json, optionally with a UTF-8 charset parameter (CONTRACT section 1); RFC 9110
// allows an empty parameter, so a trailing ";" is accepted too.
const JSON_MEDIA_TYPE = /^application\/json\s*(;\s*(charset\s*=\s*"?utf-8"?\s*)?)?$/i;
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function jsonBody(options: JsonBodyOptions): middy.MiddlewareObj<JsonEvent> {
  const { maxBytes } = options;

  const jsonBodyBefore: middy.MiddlewareFn<JsonEvent> = async (request) => {
    const { event } = request;
    const raw = event.body ?? '';
    const bytes = Buffer.byteLength(raw, event.isBase64Encoded ? 'base64' : 'utf8');
    if (bytes > maxBytes) throw new PayloadTooLargeProblem(maxBytes);

    const contentType = event.headers?.['content-type'];
    if (contentType === undefined || !JSON_MEDIA_TYPE.test(contentType.trim())) throw new UnsupportedMediaTypeProblem();

    let text = raw;
    if (event.isBase64Encoded) {
      try {
        text = STRICT_UTF8.decode(Buffer.from(raw, 'base64'));
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
      throw new MalformedJsonProblem(`The request body is not valid JSON: ${(error as Error).message}`, { cause: error });
    }
    const duplicates = duplicateKeyPointers(text);
    if (duplicates.length > 0) {
      throw new ValidationProblem(duplicates.map((pointer) => ({ pointer, detail: 'duplicate key: give each field once' })));
    }
  };

  return { before: jsonBodyBefore };
}
