/**
 * A tiny HTTP proxy on 127.0.0.1 for the benchmark: it can hold every request for a fixed time
 * before passing it on (SES answers in tens of milliseconds in AWS, the emulator in one), and it
 * tells a hook about each request it sees (to count DynamoDB operations on the wire).
 */
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, Server } from 'node:http';
import { Agent, createServer, request } from 'node:http';

export interface ProxyOptions {
  /** e.g. http://127.0.0.1:8005; only loopback upstreams are accepted. */
  readonly upstream: string;
  /** Added to every request before it is forwarded. */
  readonly delayMs?: number;
  readonly onRequest?: (req: IncomingMessage) => void;
}

export interface RunningProxy {
  readonly endpoint: string;
  close(): Promise<void>;
}

const LOOPBACK = '127.0.0.1';
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function startProxy(options: ProxyOptions): Promise<RunningProxy> {
  const upstream = new URL(options.upstream);
  if (upstream.hostname !== LOOPBACK) throw new Error(`the benchmark proxy only forwards to ${LOOPBACK}, not ${upstream.hostname}`);
  const delayMs = options.delayMs ?? 0;
  // Keep-alive on both sides, as a client of SES in AWS would have: no connection set-up per call.
  // (The timeout makes Node close an idle connection before the upstream's Keep-Alive hint runs out.)
  const agent = new Agent({ keepAlive: true, maxSockets: 512, timeout: 15_000 });

  const server: Server = createServer((req, res) => {
    options.onRequest?.(req);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('error', () => res.destroy());
    req.on('end', () => {
      void (async () => {
        if (delayMs > 0) await sleep(delayMs);
        const body = Buffer.concat(chunks);
        const forwarded = request(
          {
            host: LOOPBACK,
            port: upstream.port,
            method: req.method,
            path: req.url,
            headers: { ...req.headers, host: upstream.host, 'content-length': String(body.length) },
            agent,
          },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        forwarded.on('error', () => {
          if (!res.headersSent) res.writeHead(502).end();
          else res.destroy();
        });
        forwarded.end(body);
      })();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, LOOPBACK, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://${LOOPBACK}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
