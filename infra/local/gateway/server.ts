/**
 * The local stand-in for API Gateway: turns each HTTP request into the HTTP API payload v2
 * event AWS would deliver, calls the Lambda handler with a Lambda-like context, and writes its
 * result back. Nothing about the service lives here; routing, limits and errors are the handler's.
 *
 * The jobs are split by file: reading the body (`read-body.ts`), building the event and context
 * (`event.ts`), writing results (`result.ts`), the gateway's own problem documents
 * (`problems.ts`) and answers to requests the HTTP parser refused (`pipelining.ts`).
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import { InvalidAccessTokenProblem } from '../../../functions/me/problems';
import { redactApiKeys } from '../../../functions/shared/domain/api-keys';
import { methodsServedAt } from '../../../functions/shared/http/api-routes';
import { PayloadTooLargeProblem } from '../../../functions/shared/http/problems';
import { DEFAULTS as SERVICE_DEFAULTS } from '../../../functions/shared/runtime/config';
import { DOCS_PATHS, serveDocs } from '../docs';
import { guardHost } from '../host-guard';
import { lambdaContext, toHttpApiEvent } from './event';
import { answerUnparsedRequests, trackResponse } from './pipelining';
import { PAGE_METHODS, gatewayProblems, pageMethodAllowed, sendProblem } from './problems';
import { readBody } from './read-body';
import { sendJson, writeResult } from './result';
import type { GatewayRoute, LambdaHandler } from './routing';
import { matchRoute } from './routing';

export { lambdaContext, toHttpApiEvent } from './event';
export { writeResult } from './result';
export type { GatewayRoute, LambdaHandler } from './routing';

export interface ApiServerOptions {
  /** The `$default` route's function. Set once the stack is ready; until then every request answers 503. */
  handler?: LambdaHandler;
  /** Routes to other functions, matched before `$default` (see `routing.ts`). */
  routes?: readonly GatewayRoute[];
  /** What `GET /` answers, so tools can wait for readiness. */
  index?: () => Record<string, unknown>;
  region?: string;
  functionName?: string;
  /** API Gateway's own cap on what it reads, checked while reading; the handler has a smaller one. */
  maxRequestBytes?: number;
  /**
   * Lambda's cap on a synchronous invocation's payload, the whole event as JSON: a body within
   * `maxRequestBytes` can still exceed it once API Gateway has escaped it into the event.
   */
  maxEventBytes?: number;
  /**
   * The service's body limit (`MAX_BODY_BYTES`), the one a client must keep to: the gateway's
   * own 413, for bodies past `maxRequestBytes`, states it rather than the gateway's cap.
   */
  serviceMaxBodyBytes?: number;
  /** The integration timeout: the handler's context counts down from it. */
  timeoutMs?: number;
  /** Base of the `type` URI of the gateway's own problem documents, as the handler's. */
  problemTypeBase?: string;
  /** One line per request: method, path, status, duration. Never headers or bodies. */
  log?: (line: string) => void;
}

const DEFAULTS = {
  region: SERVICE_DEFAULTS.region,
  functionName: 'email-send-api-send-local',
  maxRequestBytes: 10 * 1024 * 1024,
  // Lambda's "Exceeded maximum allowed payload size (6291556 bytes)": 6 MiB and a little.
  maxEventBytes: 6_291_556,
  serviceMaxBodyBytes: SERVICE_DEFAULTS.maxBodyBytes as number,
  timeoutMs: 29_000,
  problemTypeBase: SERVICE_DEFAULTS.problemTypeBase,
} as const;

export interface ApiServer {
  readonly server: Server;
  /** Sets the `$default` function, and with it the other routes: the API is then ready. */
  setHandler(handler: LambdaHandler, routes?: readonly GatewayRoute[]): void;
}

export function createApiServer(opts: ApiServerOptions = {}): ApiServer {
  const options = { ...DEFAULTS, ...opts };
  let handler = options.handler;
  let routes = options.routes ?? [];

  // Node would answer an HTTP/1.1 request without Host a bare 400 itself; the guard below answers it as a problem document.
  const server = createServer({ requireHostHeader: false }, (req, res) => {
    const started = Date.now();
    trackResponse(req, res);
    res.on('finish', () => options.log?.(`${req.method} ${redactApiKeys(pathOf(req.url))} ${res.statusCode} ${Date.now() - started}ms`));
    serve(req, res).catch((error: unknown) => {
      // The connection went while the body was read (the client left, or the parser refused
      // the rest of the request and answered that itself): no one to answer, nothing to report.
      if (req.destroyed && (error as NodeJS.ErrnoException).code === 'ECONNRESET') {
        res.destroy();
        return;
      }
      // Only a fault of this adapter gets here; the handler answers its own errors.
      options.log?.(`local gateway fault: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      if (!res.headersSent) sendProblem(res, gatewayProblems.badGateway(), options.problemTypeBase);
      else res.destroy();
    });
  });
  // A page on a rebinding domain must get nothing here, not even the docs (host-guard.ts).
  guardHost(server, (_req, res, reason) => {
    if (reason === 'misdirected') return sendProblem(res, gatewayProblems.misdirected(), options.problemTypeBase);
    // As for any request the parser refuses (pipelining.ts): the answer, then the connection is closed.
    res.setHeader('Connection', 'close');
    sendProblem(res, gatewayProblems.hostMissing(), options.problemTypeBase);
  });
  // A method the parser does not know is refused before any route is read: answered from the same route table, and the local pages.
  const methodsAt = (path: string) => ((path === '/' && options.index) || (Object.values(DOCS_PATHS) as string[]).includes(path) ? PAGE_METHODS : methodsServedAt(path));
  answerUnparsedRequests(server, options.problemTypeBase, methodsAt, options.log);

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req, res, options);
    if (body === undefined) return; // already answered 413

    if (pathOf(req.url) === '/' && options.index) {
      if (pageMethodAllowed(req, res, options.problemTypeBase)) sendJson(res, handler ? 200 : 503, { ...options.index(), ready: handler !== undefined });
      return;
    }
    // The API's own documentation: GET /openapi.json and a readable page at GET /docs.
    if (serveDocs(req, res, options.problemTypeBase)) return;
    if (!handler) {
      sendProblem(res, gatewayProblems.starting(), options.problemTypeBase);
      return;
    }
    const matched = matchRoute(routes, (req.method ?? 'GET').toUpperCase(), pathOf(req.url));
    let jwt;
    if (matched?.route.authorizer) {
      // Refused here, before any function runs, as API Gateway's JWT authorizer does.
      const authorization = headerOf(req, 'authorization');
      jwt = await matched.route.authorizer(authorization);
      if (!jwt) {
        sendProblem(res, new InvalidAccessTokenProblem({ missing: authorization === undefined }), options.problemTypeBase);
        return;
      }
    }
    const event = toHttpApiEvent(req, body, matched ? { ...matched, jwt } : undefined);
    if (exceedsEventLimit(event, body.length, options.maxEventBytes)) {
      // Refused before any function runs, as Lambda refuses the invocation; the 413 names the
      // limit a client can act on.
      sendProblem(res, new PayloadTooLargeProblem(options.serviceMaxBodyBytes), options.problemTypeBase);
      return;
    }
    const context = lambdaContext({ ...options, ...(matched && { functionName: matched.route.functionName }) });
    const run = matched?.route.handler ?? handler;
    const result = await withTimeout(run(event, context), options.timeoutMs + 1_000);
    if (result === TIMED_OUT) {
      sendProblem(res, gatewayProblems.timedOut(options.timeoutMs), options.problemTypeBase);
      return;
    }
    writeResult(res, result);
  }

  return {
    server,
    setHandler(next, nextRoutes = routes) {
      handler = next;
      routes = nextRoutes;
    },
  };
}

/** Bodies this much smaller than the limit cannot reach it even escaped (at worst six bytes a byte, `\u0000`). */
const ESCAPE_FACTOR = 6;
const EVENT_ALLOWANCE = 64 * 1024;

/** Whether the event, as the JSON Lambda would be invoked with, is over `limit` bytes (measured only for large bodies). */
export function exceedsEventLimit(event: unknown, bodyBytes: number, limit: number): boolean {
  if (bodyBytes * ESCAPE_FACTOR + EVENT_ALLOWANCE <= limit) return false;
  return Buffer.byteLength(JSON.stringify(event)) > limit;
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

function pathOf(url: string | undefined): string {
  const raw = url ?? '/';
  const query = raw.indexOf('?');
  return query === -1 ? raw : raw.slice(0, query);
}

const TIMED_OUT = Symbol('timed out');

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
