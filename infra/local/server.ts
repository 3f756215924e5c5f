/**
 * The local stand-in for API Gateway: turns each HTTP request into the HTTP API payload v2
 * event AWS would deliver, calls the Lambda handler with a Lambda-like context, and writes its
 * result back. Nothing about the service lives here; routing, limits and errors are the handler's.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import { STATUS_CODES, ServerResponse, createServer, maxHeaderSize } from 'node:http';
import type { Duplex } from 'node:stream';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, Context } from 'aws-lambda';
import { DEFAULTS as SERVICE_DEFAULTS } from '../../functions/shared/runtime/config';
import { serveDocs } from './docs';

export type LambdaHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyResultV2 | undefined | void>;

export interface ApiServerOptions {
  /** Set once the stack is ready; until then every request answers 503. */
  handler?: LambdaHandler;
  /** What `GET /` answers, so tools can wait for readiness. */
  index?: () => Record<string, unknown>;
  region?: string;
  functionName?: string;
  /** API Gateway's own cap on what it reads, checked while reading; the handler has a smaller one. */
  maxRequestBytes?: number;
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
  region: 'us-east-1',
  functionName: 'email-send-api-send-local',
  maxRequestBytes: 10 * 1024 * 1024,
  serviceMaxBodyBytes: SERVICE_DEFAULTS.maxBodyBytes as number,
  timeoutMs: 29_000,
  problemTypeBase: SERVICE_DEFAULTS.problemTypeBase,
} as const;

/** How long a client that keeps sending past the cap is drained before its connection is cut. */
const DRAIN_GRACE_MS = 2_000;

// Bodies of these types reach the function as text (when they are UTF-8); anything else (or no
// type) as base64, as API Gateway does, so a handler that mishandles binary input fails here as
// it would in AWS.
const TEXT_MEDIA_TYPE = /^(text\/|application\/(json|[\w.+-]+\+json|xml|[\w.+-]+\+xml|x-www-form-urlencoded|javascript)\b)/i;
// Fatal, so bytes that are not UTF-8 are never turned into U+FFFD (such a body goes as base64);
// a byte order mark is kept, as the bytes are passed on unchanged.
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export interface ApiServer {
  readonly server: Server;
  setHandler(handler: LambdaHandler): void;
}

export function createApiServer(opts: ApiServerOptions = {}): ApiServer {
  const options = { ...DEFAULTS, ...opts };
  let handler = options.handler;

  const server = createServer((req, res) => {
    const started = Date.now();
    trackResponse(req, res);
    res.on('finish', () => options.log?.(`${req.method} ${pathOf(req.url)} ${res.statusCode} ${Date.now() - started}ms`));
    serve(req, res).catch((error: unknown) => {
      // The connection went while the body was read (the client left, or the parser refused
      // the rest of the request and answered that itself): no one to answer, nothing to report.
      if (req.destroyed && (error as NodeJS.ErrnoException).code === 'ECONNRESET') {
        res.destroy();
        return;
      }
      // Only a fault of this adapter gets here; the handler answers its own errors.
      options.log?.(`local gateway fault: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) sendProblem(res, options.problemTypeBase, 502, 'bad-gateway', 'Bad gateway', 'The local gateway could not complete the request.');
      else res.destroy();
    });
  });
  // A request Node's HTTP parser refuses never reaches the handler, as with API Gateway; it is
  // answered with a problem document like every other error, and the connection closed. The
  // parser reports each later chunk of the connection again: only the first report is answered.
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
      const status = refuseUnparsed(socket, error, options.problemTypeBase);
      options.log?.(`(unparsed request: ${parserCode(error) ?? 'error'}) ${status}`);
      // What the client still sends is read and dropped for a moment, so it sees the answer
      // rather than a connection reset; then the connection is cut.
      const cutOff = setTimeout(() => socket.destroy(), DRAIN_GRACE_MS);
      cutOff.unref();
      socket.once('close', () => clearTimeout(cutOff));
    });
  });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req, res, options);
    if (body === undefined) return; // already answered 413

    if (req.method === 'GET' && pathOf(req.url) === '/' && options.index) {
      sendJson(res, handler ? 200 : 503, { ...options.index(), ready: handler !== undefined });
      return;
    }
    // The API's own documentation: GET /openapi.json and a readable page at GET /docs.
    if (serveDocs(req, res)) return;
    if (!handler) {
      sendProblem(res, options.problemTypeBase, 503, 'starting', 'Starting', 'The local stack is still starting; retry in a moment.', { 'Retry-After': '1' });
      return;
    }
    const event = toHttpApiEvent(req, body);
    const context = lambdaContext(options);
    const result = await withTimeout(handler(event, context), options.timeoutMs + 1_000);
    if (result === TIMED_OUT) {
      sendProblem(res, options.problemTypeBase, 504, 'gateway-timeout', 'Gateway timeout', `The function did not answer within ${options.timeoutMs} ms.`);
      return;
    }
    writeResult(res, result);
  }

  return {
    server,
    setHandler(next) {
      handler = next;
    },
  };
}

function pathOf(url: string | undefined): string {
  const raw = url ?? '/';
  const query = raw.indexOf('?');
  return query === -1 ? raw : raw.slice(0, query);
}

/**
 * Reads the body up to `limit` bytes. Past it, answers 413 at once and discards what still
 * arrives for a moment before cutting the connection: closing straight away would reset it
 * while the client is still sending, and many clients then report the reset, not the answer.
 */
function readBody(
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
      sendProblem(res, options.problemTypeBase, 413, 'payload-too-large', 'Request body too large', `The request body must be at most ${options.serviceMaxBodyBytes} bytes.`);
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

/** API Gateway's request time format, e.g. `12/Mar/2020:19:03:58 +0000`. */
function gatewayTime(date: Date): string {
  const month = date.toLocaleString('en-US', { month: 'short', timeZone: 'UTC' });
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(date.getUTCDate())}/${month}/${date.getUTCFullYear()}:${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} +0000`;
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/** The payload v2 event for one request, shaped as API Gateway delivers it. */
export function toHttpApiEvent(req: IncomingMessage, body: Buffer): APIGatewayProxyEventV2 {
  const url = req.url ?? '/';
  const queryAt = url.indexOf('?');
  const rawPath = queryAt === -1 ? url : url.slice(0, queryAt);
  const rawQueryString = queryAt === -1 ? '' : url.slice(queryAt + 1);

  // Header names lower-cased, repeated headers joined with commas; cookies go to their own list.
  const headers: Record<string, string> = {};
  let cookies: string[] | undefined;
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!.toLowerCase();
    const value = req.rawHeaders[i + 1]!;
    if (name === 'cookie') {
      cookies = [...(cookies ?? []), ...value.split(';').map((c) => c.trim()).filter(Boolean)];
      continue;
    }
    headers[name] = headers[name] === undefined ? value : `${headers[name]},${value}`;
  }

  let queryStringParameters: Record<string, string> | undefined;
  for (const pair of rawQueryString ? rawQueryString.split('&') : []) {
    if (!pair) continue;
    const eq = pair.indexOf('=');
    const name = decode(eq === -1 ? pair : pair.slice(0, eq));
    const value = eq === -1 ? '' : decode(pair.slice(eq + 1));
    queryStringParameters ??= {};
    queryStringParameters[name] = queryStringParameters[name] === undefined ? value : `${queryStringParameters[name]},${value}`;
  }

  // A text type whose bytes are not UTF-8 goes as base64, as API Gateway passes a body it cannot
  // treat as text; the handler then sees the bytes, not a string with U+FFFD in their place.
  const text = body.length === 0 ? '' : TEXT_MEDIA_TYPE.test(headers['content-type'] ?? '') ? utf8(body) : undefined;
  const now = new Date();
  const host = headers.host ?? 'localhost';
  let path = rawPath;
  try {
    path = decodeURI(rawPath);
  } catch {
    // an undecodable path is passed on raw; the handler answers 404
  }

  return {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString,
    ...(cookies && { cookies }),
    headers,
    ...(queryStringParameters && { queryStringParameters }),
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: host,
      domainPrefix: host.split('.')[0]!.split(':')[0]!,
      http: {
        method: (req.method ?? 'GET').toUpperCase(),
        path,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, ''),
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: gatewayTime(now),
      timeEpoch: now.getTime(),
    },
    ...(body.length > 0 && { body: text ?? body.toString('base64') }),
    isBase64Encoded: text === undefined,
  };
}

/** The body as text, or undefined when it is not valid UTF-8. */
function utf8(body: Buffer): string | undefined {
  try {
    return UTF8.decode(body);
  } catch {
    return undefined;
  }
}

export function lambdaContext(options: { region: string; functionName: string; timeoutMs: number }): Context {
  const deadline = Date.now() + options.timeoutMs;
  const { functionName, region } = options;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${region}:000000000000:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `local/${new Date().toISOString().slice(0, 10)}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
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

/**
 * Writes the handler's result as API Gateway does for payload v2: a structured result as it
 * is; anything else (a string, an object without `statusCode`) as a 200 JSON body.
 */
export function writeResult(res: ServerResponse, result: APIGatewayProxyResultV2 | undefined | void): void {
  const structured = typeof result === 'object' && result !== null && 'statusCode' in result && typeof result.statusCode === 'number';
  if (!structured) {
    const body = result === undefined ? '' : typeof result === 'string' ? result : JSON.stringify(result);
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
    return;
  }
  const body = result.body === undefined ? Buffer.alloc(0) : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8');
  for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, String(value));
  if (result.cookies?.length) res.setHeader('Set-Cookie', result.cookies);
  res.setHeader('Content-Length', body.length);
  res.statusCode = result.statusCode ?? 200;
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}, type = 'application/json'): void {
  const body = type === 'application/json' ? JSON.stringify(value, null, 2) : JSON.stringify(value);
  res.writeHead(status, { ...headers, 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
  res.end(body);
}

/**
 * The gateway's own errors, in the same RFC 9457 form as the handler's. To a socket (a request
 * the HTTP parser refused, so there is no response object), written raw, closing the connection.
 */
function sendProblem(
  to: ServerResponse | Duplex,
  typeBase: string,
  status: number,
  slug: string,
  title: string,
  detail: string,
  headers: Record<string, string> = {},
): void {
  const requestId = randomUUID();
  const problem = { type: `${typeBase}${slug}`, title, status, detail, requestId };
  if (to instanceof ServerResponse) {
    sendJson(to, status, problem, { ...headers, 'X-Request-Id': requestId }, 'application/problem+json');
    return;
  }
  const body = JSON.stringify(problem);
  const head = {
    Date: new Date().toUTCString(),
    ...headers,
    'Content-Type': 'application/problem+json',
    'Content-Length': String(Buffer.byteLength(body)),
    'Cache-Control': 'no-store',
    'X-Request-Id': requestId,
    Connection: 'close',
  };
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`, ...Object.entries(head).map(([name, value]) => `${name}: ${value}`)];
  to.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
}

/** The llhttp error code (`HPE_…`) of a parse error, if it has one. */
function parserCode(error: Error): string | undefined {
  const code = (error as NodeJS.ErrnoException).code;
  return typeof code === 'string' && /^HPE_[A-Z_]+$/.test(code) ? code : undefined;
}

/**
 * Answers a request the parser refused, as Node itself would by status (431 for headers past
 * its limit, else 400), except that an unknown method gets the API's 405: methods are
 * case-sensitive, so `post` or `FOO` is one. Returns the status sent.
 */
function refuseUnparsed(socket: Duplex, error: Error, typeBase: string): number {
  const code = parserCode(error);
  if (code === 'HPE_HEADER_OVERFLOW') {
    sendProblem(socket, typeBase, 431, 'request-header-fields-too-large', 'Request header fields too large', `The request line and headers together must be at most ${maxHeaderSize} bytes.`);
    return 431;
  }
  if (code === 'HPE_INVALID_METHOD') {
    sendProblem(socket, typeBase, 405, 'method-not-allowed', 'Method not allowed', 'The request method is not one this API knows (method names are case-sensitive); use POST.', { Allow: 'POST' });
    return 405;
  }
  const why = code ? `is not valid HTTP/1.1 (${code})` : 'could not be read';
  sendProblem(socket, typeBase, 400, 'malformed-request', 'Malformed HTTP request', `The request ${why}, so it was not passed on.`);
  return 400;
}

// Responses still being written, per connection, so that the answer to a refused later request
// on the same connection (pipelined, or bytes past a wrong Content-Length) comes after them.
const openResponses = new WeakMap<Duplex, Map<ServerResponse, IncomingMessage>>();

function trackResponse(req: IncomingMessage, res: ServerResponse): void {
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
function afterEarlierResponses(socket: Duplex, then: () => void): void {
  const earlier = [...(openResponses.get(socket) ?? [])].filter(([, req]) => req.complete).map(([res]) => res);
  if (earlier.length === 0) {
    then();
    return;
  }
  let left = earlier.length;
  for (const res of earlier) res.once('close', () => --left === 0 && then());
}
