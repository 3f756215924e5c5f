/**
 * Network-level failures of an SDK call, recognised by their Node error code or name rather than
 * by `instanceof` (socket errors come from Node's core and may belong to another realm).
 */

/** The connection was never made: the request cannot have reached the service. */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
/** The connection broke or timed out after the request may have been received. */
const ANSWER_LOST = new Set(['ECONNRESET', 'ETIMEDOUT', 'EPIPE']);
const ANSWER_LOST_NAMES = new Set(['TimeoutError', 'AbortError', 'RequestTimeout']);

// Some wrappers keep only the message (the SDK's retry middleware does, for errors from another
// realm), so the code is also looked for there as a last resort.
const CODE_IN_MESSAGE = /\b(E[A-Z]{4,}[A-Z_]*)\b/;

export type NetworkFailure = 'not-connected' | 'answer-lost';

export function networkFailure(error: unknown): NetworkFailure | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, name, message } = error as { code?: unknown; name?: unknown; message?: unknown };
  const errorCode = typeof code === 'string' ? code : typeof message === 'string' ? CODE_IN_MESSAGE.exec(message)?.[1] : undefined;
  if (errorCode !== undefined && NOT_CONNECTED.has(errorCode)) return 'not-connected';
  if ((errorCode !== undefined && ANSWER_LOST.has(errorCode)) || (typeof name === 'string' && ANSWER_LOST_NAMES.has(name))) return 'answer-lost';
  return undefined;
}
