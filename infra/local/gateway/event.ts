/**
 * The payload v2 event API Gateway would deliver for one request, and the Lambda-like context
 * the handler is called with.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import type { JwtAuthorization } from './routing';

// Bodies of these types reach the function as text (when they are UTF-8); anything else (or no
// type) as base64, as API Gateway does, so a handler that mishandles binary input fails here as
// it would in AWS.
const TEXT_MEDIA_TYPE = /^(text\/|application\/(json|[\w.+-]+\+json|xml|[\w.+-]+\+xml|x-www-form-urlencoded|javascript)\b)/i;
// Fatal, so bytes that are not UTF-8 are never turned into U+FFFD (such a body goes as base64);
// a byte order mark is kept, as the bytes are passed on unchanged.
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

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

/** Which route matched, as API Gateway tells the function; `$default` when none did. */
export interface MatchedRoute {
  readonly routeKey: string;
  readonly pathParameters?: Record<string, string> | undefined;
  /** The claims a JWT authorizer accepted, handed on as `requestContext.authorizer.jwt`. */
  readonly jwt?: JwtAuthorization | undefined;
}

/** The payload v2 event for one request, shaped as API Gateway delivers it. */
export function toHttpApiEvent(req: IncomingMessage, body: Buffer, matched: MatchedRoute = { routeKey: '$default' }): APIGatewayProxyEventV2 {
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
  // API Gateway sets the scheme it was called with, whatever the client sent; here it is http.
  headers['x-forwarded-proto'] = 'http';

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
    routeKey: matched.routeKey,
    rawPath,
    rawQueryString,
    ...(cookies && { cookies }),
    headers,
    ...(queryStringParameters && { queryStringParameters }),
    ...(matched.pathParameters && { pathParameters: matched.pathParameters }),
    requestContext: {
      ...(matched.jwt && { authorizer: { jwt: { claims: { ...matched.jwt.claims }, scopes: matched.jwt.scopes ? [...matched.jwt.scopes] : null } } }),
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
      routeKey: matched.routeKey,
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

