/**
 * The `Idempotency-Key` header as every request reads it (CONTRACT section 6). What a request with
 * one goes through, `idempotency.ts`, is loaded only by the first request that has one.
 */
import { InvalidIdempotencyKeyProblem } from '../shared/http/problems';

const KEY_SHAPE = /^[\x20-\x7e]{1,255}$/;

/** The header's key, undefined when absent; a 400 when present but malformed. */
export function readIdempotencyKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (!KEY_SHAPE.test(header)) throw new InvalidIdempotencyKeyProblem();
  return header;
}
