/**
 * Passing a request on to a service on 127.0.0.1, as it came, over kept-alive connections: used
 * by the SES rate gate in front of the emulator, and by the benchmark's latency proxy.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Agent, request } from 'node:http';
import { LOOPBACK } from './settings';

export interface Forwarder {
  /**
   * Sends `body` (already read from `req`) to the upstream and pipes its answer to `res`; with
   * `onAnswer`, the answer is read whole first and handed to it as well (the mailbox simulator).
   */
  forward(req: IncomingMessage, body: Buffer, res: ServerResponse, onAnswer?: (status: number, answer: Buffer) => void): void;
  close(): void;
}

export function forwarderTo(upstream: string): Forwarder {
  const target = new URL(upstream);
  if (target.hostname !== LOOPBACK) throw new Error(`only ${LOOPBACK} upstreams are forwarded to, not ${target.hostname}`);
  // Keep-alive on both sides, as a client of SES in AWS would have: no connection set-up per call.
  // (The timeout makes Node close an idle connection before the upstream's Keep-Alive hint runs out.)
  const agent = new Agent({ keepAlive: true, maxSockets: 512, timeout: 15_000 });
  return {
    forward(req, body, res, onAnswer) {
      const forwarded = request(
        {
          host: LOOPBACK,
          port: target.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: target.host, 'content-length': String(body.length) },
          agent,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          if (!onAnswer) {
            answer.pipe(res);
            return;
          }
          readAll(answer).then((whole) => {
            res.end(whole);
            onAnswer(answer.statusCode ?? 502, whole);
          }, () => res.destroy());
        },
      );
      forwarded.on('error', () => {
        if (!res.headersSent) res.writeHead(502).end();
        else res.destroy();
      });
      forwarded.end(body);
    },
    close: () => agent.destroy(),
  };
}

/** Reads a whole request body. */
export function readAll(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}
