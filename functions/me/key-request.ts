/**
 * The optional body of `POST /v1.2/me/api-key` and `POST /v1.2/me/api-key/rotate`: what the new
 * key may do (docs/keys.md). `{ "Scopes": ["send"], "Senders": ["example.com"], "ExpiresIn": "90d",
 * "Test": true }`, every field optional; no body, or `{}`, makes a key that may do everything, as
 * before. A bad value is a 400 naming the field, and nothing changes.
 */
import type { KeyPolicy } from '../shared/domain/key-policy';
import { KeyPolicyError, keepSchedulesRefusal, parseExpiresIn, parseScopes, parseSenders } from '../shared/domain/key-policy';
import type { FieldProblem } from '../shared/http/problems';
import { MalformedJsonProblem, ValidationProblem } from '../shared/http/problems';
import type { KeyOptions } from '../shared/store/dynamodb-key-store';

const FIELDS = ['Scopes', 'Senders', 'ExpiresIn', 'Test', 'KeepSchedules'] as const;

export interface KeyRequest {
  readonly policy: KeyPolicy;
  readonly test: boolean;
  /** Rotate only: keep the old key's scheduled messages, on the new key (else they are cancelled). */
  readonly keepSchedules: boolean;
}

export function readKeyRequest(body: string | undefined, isBase64: boolean | undefined, now: number): KeyRequest {
  const text = body === undefined ? '' : isBase64 ? Buffer.from(body, 'base64').toString('utf8') : body;
  if (text.trim() === '') return { policy: {}, test: false, keepSchedules: false };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new MalformedJsonProblem('The body must be a JSON object such as {"Scopes": ["send"], "ExpiresIn": "90d"}, or empty.');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new ValidationProblem([{ pointer: '', detail: 'must be a JSON object' }]);
  const fields = parsed as Record<string, unknown>;
  const problems: FieldProblem[] = Object.keys(fields)
    .filter((name) => !(FIELDS as readonly string[]).includes(name))
    .map((name) => ({ pointer: `/${name}`, detail: `unknown field; the fields are ${FIELDS.join(', ')}` }));
  const field = <T>(name: (typeof FIELDS)[number], read: (value: unknown) => T): T | undefined => {
    if (fields[name] === undefined) return undefined;
    try {
      return read(fields[name]);
    } catch (error) {
      if (!(error instanceof KeyPolicyError)) throw error;
      problems.push({ pointer: `/${name}`, detail: error.message });
      return undefined;
    }
  };
  const list = (value: unknown): string[] => {
    if (!Array.isArray(value) || value.some((entry) => typeof entry !== 'string')) throw new KeyPolicyError('must be an array of strings');
    return value as string[];
  };
  const scopes = field('Scopes', (value) => parseScopes(list(value)));
  const senders = field('Senders', (value) => parseSenders(list(value)));
  const expiresAt = field('ExpiresIn', (value) => {
    if (typeof value !== 'string') throw new KeyPolicyError('must be a duration such as "90d" or "12h"');
    return parseExpiresIn(value, now);
  });
  const test = field('Test', (value) => {
    if (typeof value !== 'boolean') throw new KeyPolicyError('must be true or false');
    return value;
  });
  const keepSchedules = field('KeepSchedules', (value) => {
    if (typeof value !== 'boolean') throw new KeyPolicyError('must be true or false');
    return value;
  });
  // Live-only: the old key's scheduled messages are live mail, which a test key never sends.
  const refusal = keepSchedules === true ? keepSchedulesRefusal(test === true, { ...(scopes && { scopes }) }) : undefined;
  if (refusal) problems.push({ pointer: '/KeepSchedules', detail: `cannot go with ${test === true ? '"Test": true' : 'Scopes without "send"'}: ${refusal}` });
  if (problems.length > 0) throw new ValidationProblem(problems);
  return { policy: { ...(scopes && { scopes }), ...(senders && { senders }), ...(expiresAt && { expiresAt }) }, test: test === true, keepSchedules: keepSchedules === true };
}

/** The key store's options for a request, sealing as the settings API does. */
export function keyOptions(request: KeyRequest, seal: KeyOptions['seal']): KeyOptions {
  return { seal, policy: request.policy, test: request.test };
}
