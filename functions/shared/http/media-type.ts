/**
 * What a JSON body must be sent as (CONTRACT section 1): `application/json`, in UTF-8, not
 * compressed. The API-key endpoints check it in steps around the key (middleware/json-body.ts);
 * the settings API, whose bodies may be left out, all at once (`requireJsonMediaIfBody`).
 */
import { UnsupportedMediaTypeProblem } from './problems';

// application/json, optionally with a UTF-8 charset parameter (CONTRACT section 1); RFC 9110
// allows an empty parameter, so a trailing ";" is accepted too.
const JSON_MEDIA_TYPE = /^application\/json\s*(;\s*(charset\s*=\s*"?utf-8"?\s*)?)?$/i;

export const isJsonMediaType = (contentType: string | undefined): boolean => contentType !== undefined && JSON_MEDIA_TYPE.test(contentType.trim());

/** Whether a `Content-Encoding` (a comma list, repeated headers joined) names any coding but `identity`. */
export const isEncoded = (header: string | undefined): header is string => (header ?? '').split(',').some((coding) => !['', 'identity'].includes(coding.trim().toLowerCase()));

/**
 * For a body that may be left out (the settings API's POSTs): when there is one, it must be sent
 * as the API-key endpoints' bodies are, `application/json` and not compressed, or 415.
 */
export function requireJsonMediaIfBody(headers: Readonly<Record<string, string | undefined>> | undefined, body: string | undefined): void {
  if (!body) return;
  if (!isJsonMediaType(headers?.['content-type'])) throw new UnsupportedMediaTypeProblem();
  const contentEncoding = headers?.['content-encoding'];
  if (isEncoded(contentEncoding)) throw new UnsupportedMediaTypeProblem({ contentEncoding: contentEncoding.trim() });
}
