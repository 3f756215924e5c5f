/**
 * DNS rebinding defence for every server of the local stack. Listening on 127.0.0.1 keeps other
 * machines out, but not a web page: a domain the attacker controls can be made to resolve to
 * 127.0.0.1 after the page has loaded, and the browser then sends the page's requests here as
 * same-origin ones, with the attacker's name in `Host`. So a request is served only when its
 * `Host` is exactly `127.0.0.1:<port>` or `localhost:<port>`, the port being the one the
 * connection arrived on: the names a browser, curl or the AWS SDK use for this machine. Anything
 * else gets 421 Misdirected Request and never reaches the server's own handler.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { LOOPBACK } from './settings';

/** Whether `host` names this machine at the port the request arrived on. */
export function isLocalHost(host: string | undefined, port: number | undefined): boolean {
  if (host === undefined || port === undefined) return false;
  const lower = host.toLowerCase();
  return lower === `${LOOPBACK}:${port}` || lower === `localhost:${port}`;
}

/** Why a request is refused: no `Host` at all on HTTP/1.1 (RFC 9112 section 3.2: 400), or a `Host` that is not this machine (421). */
export type RefusalReason = 'host-missing' | 'misdirected';

export type Refusal = (req: IncomingMessage, res: ServerResponse, reason: RefusalReason) => void;

const MISDIRECTED = 'This server answers only to Host 127.0.0.1:<port> or localhost:<port>.\n';

/** The plain answer, for servers with no problem documents of their own (Node answers their missing Host itself). */
export const refuseMisdirected: Refusal = (_req, res) => {
  res.writeHead(421, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(MISDIRECTED), 'Cache-Control': 'no-store' });
  res.end(MISDIRECTED);
};

/**
 * Puts the check in front of every request handler the server already has (or gets later through
 * `createServer`'s listener): for servers built by libraries (the SES emulator, dynalite) as much
 * as for the stack's own.
 */
export function guardHost(server: Server, refuse: Refusal = refuseMisdirected): Server {
  const handlers = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    // HTTP/1.1 requires Host even beside a target in absolute form (RFC 9112 section 3.2).
    if (req.headers.host === undefined && req.httpVersion === '1.1') {
      refuse(req, res, 'host-missing');
      return;
    }
    toOriginForm(req);
    if (!isLocalHost(req.headers.host, req.socket.localPort)) {
      refuse(req, res, 'misdirected');
      return;
    }
    for (const handler of handlers) handler.call(server, req, res);
  });
  return server;
}

/**
 * A request target in absolute form (`POST http://127.0.0.1:3000/v1.2/email/send HTTP/1.1`, as
 * some proxies and clients send it) names its host itself, and a server must use that host and
 * ignore `Host` (RFC 9112 section 3.2.2). So the target's host becomes `Host`, checked as any
 * other, and the target becomes its path and query, as every handler behind expects.
 */
function toOriginForm(req: IncomingMessage): void {
  const absolute = /^https?:\/\/([^/?#]*)(.*)$/is.exec(req.url ?? '');
  if (!absolute || !URL.canParse(`http://${absolute[1]}/`)) return;
  const { host } = new URL(`http://${absolute[1]}/`);
  // The path and query as written: only the host is read through URL, which would also resolve
  // `..` and `%2e%2e` in the path and route the request elsewhere than its origin form would.
  const rest = absolute[2]!;
  req.url = rest.startsWith('/') ? rest : `/${rest}`;
  req.headers.host = host;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() === 'host') req.rawHeaders[i + 1] = host;
}
