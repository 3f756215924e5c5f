/**
 * Answers to connections whose requests never reach the handler: requests Node's HTTP parser
 * refuses, answered in order after the earlier responses on the same connection.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { parserCode, sendProblem, unparsedRequestProblem } from './problems';
import { DRAIN_GRACE_MS } from './read-body';

// on the same connection (pipelined, or bytes past a wrong Content-Length) comes after them.
const openResponses = new WeakMap<Duplex, Map<ServerResponse, IncomingMessage>>();

export function trackResponse(req: IncomingMessage, res: ServerResponse): void {
  let open = openResponses.get(req.socket);
  if (!open) openResponses.set(req.socket, (open = new Map()));
  open.set(res, req);
  res.once('close', () => open.delete(res));
}

/**
 * Calls `then` once the responses to the requests this connection completed are written. A
 * request still being read is the refused one itself (a malformed chunked body): its response
 * never comes, so it is not waited for.
 */
export function afterEarlierResponses(socket: Duplex, then: () => void): void {
  const earlier = [...(openResponses.get(socket) ?? [])].filter(([, req]) => req.complete).map(([res]) => res);
  if (earlier.length === 0) {
    then();
    return;
  }
  let left = earlier.length;
  for (const res of earlier) res.once('close', () => --left === 0 && then());
}

/**
 * A request Node's HTTP parser refuses never reaches the handler, as with API Gateway; it is
 * answered with a problem document like every other error, and the connection closed. The
 * parser reports each later chunk of the connection again: only the first report is answered.
 */
export function answerUnparsedRequests(server: Server, typeBase: string, methodsAt: (path: string) => readonly string[], log?: (line: string) => void): void {
  const refused = new WeakSet<Duplex>();
  server.on('clientError', (error: Error, socket: Duplex) => {
    if (refused.has(socket)) return;
    refused.add(socket);
    if ((error as NodeJS.ErrnoException).code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    // An earlier request on this connection may still be answering: this answer goes after it.
    afterEarlierResponses(socket, () => {
      if (!socket.writable) {
        socket.destroy();
        return;
      }
      const problem = unparsedRequestProblem(error, methodsAt);
      sendProblem(socket, problem, typeBase);
      log?.(`(unparsed request: ${parserCode(error) ?? 'error'}) ${problem.status}`);
      // What the client still sends is read and dropped for a moment, so it sees the answer
      // rather than a connection reset; then the connection is cut.
      const cutOff = setTimeout(() => socket.destroy(), DRAIN_GRACE_MS);
      cutOff.unref();
      socket.once('close', () => clearTimeout(cutOff));
    });
  });
}
