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
// realm), so a known code is also looked for there as a last resort.
const CODE_IN_MESSAGE = new RegExp(`\\b(${[...NOT_CONNECTED, ...ANSWER_LOST].join('|')})\\b`);

/** The socket error code behind a failed call (ETIMEDOUT for a timeout), if that is what it was. */
export function networkErrorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, name, message } = error as { code?: unknown; name?: unknown; message?: unknown };
  if (typeof code === 'string' && (NOT_CONNECTED.has(code) || ANSWER_LOST.has(code))) return code;
  if (typeof name === 'string' && ANSWER_LOST_NAMES.has(name)) return name === 'AbortError' ? 'ABORTED' : 'ETIMEDOUT';
  return typeof message === 'string' ? CODE_IN_MESSAGE.exec(message)?.[1] : undefined;
}

export type NetworkFailure = 'not-connected' | 'answer-lost';

export function networkFailure(error: unknown): NetworkFailure | undefined {
  const code = networkErrorCode(error);
  if (code === undefined) return undefined;
  return NOT_CONNECTED.has(code) ? 'not-connected' : 'answer-lost';
}
