/**
 * Reads a request body up to the gateway's cap, answering 413 past it as API Gateway would.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PayloadTooLargeProblem } from '../../../functions/shared/http/problems';
import { sendProblem } from './problems';

/** How long a client that keeps sending past the cap is drained before its connection is cut. */
export const DRAIN_GRACE_MS = 2_000;

/**
 * Reads the body up to `limit` bytes. Past it, answers 413 at once and discards what still
 * arrives for a moment before cutting the connection: closing straight away would reset it
 * while the client is still sending, and many clients then report the reset, not the answer.
 */
export function readBody(
  req: IncomingMessage,
  res: ServerResponse,
  options: { maxRequestBytes: number; serviceMaxBodyBytes: number; problemTypeBase: string },
): Promise<Buffer | undefined> {
  const limit = options.maxRequestBytes;
  return new Promise((resolve, reject) => {
    const tooLarge = () => {
      req.removeAllListeners('data');
      req.on('data', () => undefined);
      const cutOff = setTimeout(() => req.socket.destroy(), DRAIN_GRACE_MS);
      cutOff.unref();
      req.once('end', () => clearTimeout(cutOff));
      // The limit a client must keep to is the service's (MAX_BODY_BYTES), not this read cap.
      sendProblem(res, new PayloadTooLargeProblem(options.serviceMaxBodyBytes), options.problemTypeBase);
      resolve(undefined);
    };

    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      tooLarge();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        chunks.length = 0;
        tooLarge();
        return;
      }
      chunks.push(chunk);
    });
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

