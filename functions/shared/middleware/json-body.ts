/**
 * Reads the JSON body: the size limit first (before any parsing), then the media type, then the
 * parse itself. The parsed value is left in `event.jsonBody`; the raw string is not touched.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { MalformedJsonProblem, PayloadTooLargeProblem, UnsupportedMediaTypeProblem } from '../errors';

export type JsonEvent = APIGatewayProxyEventV2 & { jsonBody?: unknown };

export interface JsonBodyOptions {
  readonly maxBytes: number;
}

// application/json, optionally with a UTF-8 charset parameter (CONTRACT section 1).
const JSON_MEDIA_TYPE = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

export function jsonBody(options: JsonBodyOptions): middy.MiddlewareObj<JsonEvent> {
  const { maxBytes } = options;

  const jsonBodyBefore: middy.MiddlewareFn<JsonEvent> = async (request) => {
    const { event } = request;
    const raw = event.body ?? '';
    // A base64 body decodes to 3/4 of its length; the check is on the decoded bytes.
    const bytes = event.isBase64Encoded ? Math.floor((raw.length * 3) / 4) : Buffer.byteLength(raw, 'utf8');
    if (bytes > maxBytes) throw new PayloadTooLargeProblem(maxBytes);

    const contentType = event.headers?.['content-type'];
    if (contentType === undefined || !JSON_MEDIA_TYPE.test(contentType.trim())) throw new UnsupportedMediaTypeProblem();

    const text = event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
    if (text.trim() === '') throw new MalformedJsonProblem('The request body is empty; send a JSON object.');
    try {
      // JSON.parse makes "__proto__" an ordinary own key, never a prototype: validation then
      // reports it as an unknown field.
      event.jsonBody = JSON.parse(text);
    } catch (error) {
      throw new MalformedJsonProblem(`The request body is not valid JSON: ${(error as Error).message}`, { cause: error });
    }
  };

  return { before: jsonBodyBefore };
}
