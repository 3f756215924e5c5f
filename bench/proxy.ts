/**
 * A tiny HTTP proxy on 127.0.0.1 for the benchmark: it can hold every request for a fixed time
 * before passing it on (SES answers in tens of milliseconds in AWS, the emulator in one), and it
 * tells a hook about each request it sees (to count DynamoDB operations on the wire).
 */
import type { IncomingMessage, Server } from 'node:http';
import { createServer } from 'node:http';
import { forwarderTo, readAll } from '../infra/local/forward';
import { closeServer, listening } from '../infra/local/emulators';

export interface ProxyOptions {
  /** e.g. http://127.0.0.1:8005; only loopback upstreams are accepted. */
  readonly upstream: string;
  /** Added to every request before it is forwarded. */
  readonly delayMs?: number;
  readonly onRequest?: (req: IncomingMessage) => void;
  /** Told each request's whole body, before it is forwarded. */
  readonly onBody?: (req: IncomingMessage, body: Buffer) => void;
  /** Told each answer whole, with the request's body and how long the upstream took (ms). */
  readonly onAnswer?: (req: IncomingMessage, body: Buffer, status: number, answer: Buffer, ms: number) => void;
}

export interface RunningProxy {
  readonly endpoint: string;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function startProxy(options: ProxyOptions): Promise<RunningProxy> {
  const forwarder = forwarderTo(options.upstream);
  const delayMs = options.delayMs ?? 0;
  const server: Server = createServer((req, res) => {
    options.onRequest?.(req);
    void (async () => {
      const body = await readAll(req);
      options.onBody?.(req, body);
      if (delayMs > 0) await sleep(delayMs);
      const onAnswer = options.onAnswer;
      const sent = performance.now();
      forwarder.forward(req, body, res, onAnswer && ((status, answer) => onAnswer(req, body, status, answer, performance.now() - sent)));
    })().catch(() => res.destroy());
  });
  const port = await listening(server, 0);
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: async () => {
      forwarder.close();
      await closeServer(server);
    },
  };
}
