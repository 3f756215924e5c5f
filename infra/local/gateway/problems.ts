/**
 * The gateway's own answers, made of the handler's problem classes and rendered by the handler's
 * own `problemResponse`, so they cannot drift from the service's form. To a socket (a request the
 * HTTP parser refused, so there is no response object) the answer is written raw, closing the
 * connection.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { STATUS_CODES, ServerResponse, maxHeaderSize } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { API_ROUTES, describeRoute } from '../../../functions/shared/http/api-routes';
import { HttpProblem, MethodNotAllowedProblem, NotFoundProblem } from '../../../functions/shared/http/problems';
import { problemResponse } from '../../../functions/shared/http/middleware/problem-responses';
import { SEND_METHODS } from '../../../functions/send/route';
import { writeResult } from './result';

export const gatewayProblems = {
  badGateway: () => new HttpProblem(502, 'bad-gateway', 'Bad gateway', { detail: 'The local gateway could not complete the request.' }),
  starting: () =>
    new HttpProblem(503, 'starting', 'Starting', { detail: 'The local stack is still starting; retry in a moment.', headers: { 'Retry-After': '1' } }),
  misdirected: () =>
    new HttpProblem(421, 'misdirected-request', 'Misdirected request', {
      detail: 'The local stack answers only to Host 127.0.0.1:<port> or localhost:<port>.',
    }),
  malformed: (detail: string) => new HttpProblem(400, 'malformed-request', 'Malformed HTTP request', { detail }),
  // RFC 9112 section 3.2: a server must answer 400 to an HTTP/1.1 request without Host.
  hostMissing: () => gatewayProblems.malformed('An HTTP/1.1 request must carry a Host header (127.0.0.1:<port> or localhost:<port> here).'),
  timedOut: (timeoutMs: number) =>
    new HttpProblem(504, 'gateway-timeout', 'Gateway timeout', { detail: `The function did not answer within ${timeoutMs} ms.` }),
};

export function sendProblem(to: ServerResponse | Duplex, problem: HttpProblem, typeBase: string): void {
  // The gateway listens on loopback only: its own origin is 127.0.0.1 and the port it answers on.
  const socket = to instanceof ServerResponse ? to.socket : to;
  const port = socket && 'localPort' in socket ? (socket as Socket).localPort : undefined;
  const response = problemResponse(problem, typeBase, randomUUID(), port === undefined ? undefined : `http://127.0.0.1:${port}`);
  if (to instanceof ServerResponse) {
    writeResult(to, response);
    return;
  }
  const head = {
    Date: new Date().toUTCString(),
    ...response.headers,
    'Content-Length': String(Buffer.byteLength(response.body)),
    Connection: 'close',
  };
  const lines = [`HTTP/1.1 ${response.statusCode} ${STATUS_CODES[response.statusCode] ?? 'Error'}`, ...Object.entries(head).map(([name, value]) => `${name}: ${value}`)];
  to.end(`${lines.join('\r\n')}\r\n\r\n${response.body}`);
}

/** What the local stack's own pages (`/`, `/openapi.json`, `/docs` and its renderer) serve: HEAD is GET without the body. */
export const PAGE_METHODS = ['GET', 'HEAD'] as const;

/**
 * For a request to one of those pages: true when its method is one they serve; otherwise answers
 * 405 with `Allow: GET, HEAD`, as the handler answers other methods on its own path, and returns
 * false. A path that exists is never answered 404 for its method.
 */
export function pageMethodAllowed(req: IncomingMessage, res: ServerResponse, typeBase: string): boolean {
  const method = req.method ?? '';
  if ((PAGE_METHODS as readonly string[]).includes(method)) return true;
  sendProblem(res, new MethodNotAllowedProblem(method, PAGE_METHODS), typeBase);
  return false;
}

/** The llhttp error code (`HPE_…`) of a parse error, if it has one. */
export function parserCode(error: Error): string | undefined {
  const code = (error as NodeJS.ErrnoException).code;
  return typeof code === 'string' && /^HPE_[A-Z_]+$/.test(code) ? code : undefined;
}

/**
 * The path of a refused request's target, read from the bytes the parser was given (of a target
 * in absolute form, its path); undefined when the request line cannot be read. The packet may
 * begin with earlier requests of the same connection (pipelined, or bytes past a wrong
 * Content-Length): the refused one's line is the one holding the byte the parser stopped at.
 */
function refusedPath(error: Error): string | undefined {
  const { rawPacket: packet, bytesParsed } = error as { rawPacket?: unknown; bytesParsed?: unknown };
  if (!Buffer.isBuffer(packet)) return undefined;
  const stoppedAt = typeof bytesParsed === 'number' && bytesParsed > 0 ? Math.min(bytesParsed, packet.length) - 1 : 0;
  const line = packet.subarray(packet.lastIndexOf(0x0a, stoppedAt) + 1).toString('latin1');
  const target = /^[^ \r\n]+ ([^ \r\n]+) HTTP\/\d\.\d\r?\n/.exec(line)?.[1];
  return target === undefined ? undefined : target.replace(/^https?:\/\/[^/?#]*/i, '').split(/[?#]/)[0] || '/';
}

/**
 * The answer to a request the parser refused, as Node itself would by status (431 for headers
 * past its limit, else 400), except that an unknown method gets the API's answer: methods are
 * case-sensitive, so `post` or `FOO` is one, and it gets 405 with `Allow` naming what its path
 * serves (`methodsAt`), as any other method the path does not serve, or 404 on a path that
 * serves nothing.
 */
export function unparsedRequestProblem(error: Error, methodsAt: (path: string) => readonly string[]): HttpProblem {
  const code = parserCode(error);
  if (code === 'HPE_HEADER_OVERFLOW') {
    return new HttpProblem(431, 'request-header-fields-too-large', 'Request header fields too large', {
      detail: `The request line and headers together must be at most ${maxHeaderSize} bytes.`,
    });
  }
  if (code === 'HPE_INVALID_METHOD') {
    const path = refusedPath(error);
    const allow = path === undefined ? SEND_METHODS : methodsAt(path);
    if (path !== undefined && allow.length === 0) return new NotFoundProblem(path, describeRoute(API_ROUTES.send));
    return new MethodNotAllowedProblem('The request method', allow, {
      detail: `The request method is not one this API knows (method names are case-sensitive); use ${allow.join(', ')}.`,
    });
  }
  const why = code ? `is not valid HTTP/1.1 (${code})` : 'could not be read';
  return gatewayProblems.malformed(`The request ${why}, so it was not passed on.`);
}
