/**
 * The local gateway alone: the payload v2 event and Lambda context it builds from real HTTP
 * requests, and how it writes handler results back. A recording handler stands in for the
 * function, since what is under test is the translation, not the service.
 */
import { request } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, Context } from 'aws-lambda';
import { DEFAULTS as SERVICE_DEFAULTS } from '../../functions/shared/runtime/config';
import type { ApiServer, LambdaHandler } from '../../infra/local/gateway/server';
import { createApiServer } from '../../infra/local/gateway/server';
import { assertResponseMatchesOpenApi } from '../support/openapi';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let api: ApiServer;
let base: string;
let calls: { event: APIGatewayProxyEventV2; context: Context; remainingAtCall: number }[];
let answer: LambdaHandler;
const record = (result: APIGatewayProxyResultV2): LambdaHandler => async (event, context) => {
  calls.push({ event, context, remainingAtCall: context.getRemainingTimeInMillis() });
  return result;
};

beforeAll(async () => {
  api = createApiServer({ index: () => ({ service: 'test' }), region: 'eu-west-1', functionName: 'send-test' });
  await new Promise<void>((resolve) => api.server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  api.server.closeAllConnections();
  await new Promise((resolve) => api.server.close(resolve));
});
afterEach(() => {
  calls = [];
});
calls = [];

/** A plain node:http request, so repeated headers (array values) and exact bytes can be sent. */
function raw(
  path: string,
  options: { method?: string; headers?: Record<string, string | string[]>; body?: Buffer },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method: options.method ?? 'GET', headers: options.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

interface RawResponse {
  readonly status: number;
  /** Header names in lower case. */
  readonly headers: Record<string, string>;
  readonly body: string;
  /** Everything the server wrote before it closed the connection. */
  readonly text: string;
}

/**
 * Writes bytes as they are to a new connection, which no HTTP client would send, and resolves
 * with what came back once the server has closed the connection (the test times out otherwise).
 */
/** Writes `bytes` (with `{host}` standing for the server's own `127.0.0.1:<port>`) and reads the answer. */
function exchange(bytes: string | Buffer, url = base): Promise<RawResponse> {
  const { hostname, port, host } = new URL(url);
  const raw = typeof bytes === 'string' ? bytes.replaceAll('{host}', host) : bytes;
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(raw));
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      // The first response on the connection.
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      const body = rest.join('\r\n\r\n').slice(0, Number(headers['content-length'] ?? 0));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body, text });
    });
  });
}

/** A problem document as every error of the service is: RFC 9457, with X-Request-Id and no-store. */
/** `typeBase`: the default (a path) is answered as a URL on the gateway's own origin, where the pages are. */
function expectRawProblem(response: RawResponse, status: number, slug: string, typeBase = `${base}${SERVICE_DEFAULTS.problemTypeBase}`): Record<string, unknown> {
  expect(response.status).toBe(status);
  expect(response.headers).toMatchObject({ 'content-type': 'application/problem+json', 'cache-control': 'no-store', connection: 'close' });
  const problem = JSON.parse(response.body) as Record<string, unknown>;
  expect(problem).toEqual({ type: `${typeBase}${slug}`, title: expect.any(String), status, detail: expect.any(String), requestId: expect.stringMatching(UUID) });
  expect(response.headers['x-request-id']).toBe(problem.requestId);
  return problem;
}

describe('createApiServer before the stack is ready', () => {
  it('answers 503 with a problem document, and GET / says not ready', async () => {
    const response = await fetch(`${base}/v1.2/email/send`, { method: 'POST' });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(await response.json()).toMatchObject({ status: 503, type: expect.stringContaining('/problems/') });
    const index = await fetch(`${base}/`);
    expect(index.status).toBe(503);
    expect(await index.json()).toEqual({ service: 'test', ready: false });
  });
});

describe('createApiServer: the event', () => {
  beforeAll(() => {
    answer = record({ statusCode: 204 });
    api.setHandler((event, context) => answer(event, context));
  });

  it('builds a payload v2 event as API Gateway does', async () => {
    const before = Date.now();
    const response = await raw('/v1.2/email/send?a=1&b=x%20y&a=2', {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-Custom': ['one', 'two'],
        Cookie: 'session=abc; theme=dark',
        'User-Agent': 'curl/8.0',
      },
      body: Buffer.from('{"héllo":1}'),
    });
    expect(response.status).toBe(204);
    const [{ event }] = calls as [(typeof calls)[number]];
    expect(event).toMatchObject({
      version: '2.0',
      routeKey: '$default',
      rawPath: '/v1.2/email/send',
      rawQueryString: 'a=1&b=x%20y&a=2',
      queryStringParameters: { a: '1,2', b: 'x y' },
      cookies: ['session=abc', 'theme=dark'],
      body: '{"héllo":1}',
      isBase64Encoded: false,
      requestContext: {
        routeKey: '$default',
        stage: '$default',
        http: { method: 'POST', path: '/v1.2/email/send', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'curl/8.0' },
      },
    });
    expect(event.headers).toMatchObject({ 'content-type': 'application/json', 'x-custom': 'one,two', 'user-agent': 'curl/8.0' });
    expect(Object.keys(event.headers).every((name) => name === name.toLowerCase())).toBe(true);
    expect(event.headers.cookie).toBeUndefined();
    expect(event.requestContext.requestId).toMatch(UUID);
    expect(event.requestContext.timeEpoch).toBeGreaterThanOrEqual(before);
    expect(event.requestContext.time).toMatch(/^\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000$/);
  });

  it('passes a non-text body as base64, byte for byte', async () => {
    const bytes = Buffer.from([0, 255, 128, 10, 13, 0x80, 0xc3]);
    await raw('/upload', { method: 'PUT', headers: { 'Content-Type': 'application/octet-stream' }, body: bytes });
    const [{ event }] = calls as [(typeof calls)[number]];
    expect(event.isBase64Encoded).toBe(true);
    expect(Buffer.from(event.body!, 'base64')).toEqual(bytes);
    expect(event.requestContext.http.method).toBe('PUT');
  });

  it('leaves out body and query parameters when there are none', async () => {
    await raw('/anything', {});
    const [{ event }] = calls as [(typeof calls)[number]];
    expect(event.body).toBeUndefined();
    expect(event.isBase64Encoded).toBe(false);
    expect(event.queryStringParameters).toBeUndefined();
    expect(event.rawQueryString).toBe('');
    expect(event.cookies).toBeUndefined();
  });

  it('gives the handler a Lambda-like context counting down from 29 s', async () => {
    await raw('/v1.2/email/send', { method: 'POST' });
    const [{ context, remainingAtCall }] = calls as [(typeof calls)[number]];
    expect(remainingAtCall).toBeLessThanOrEqual(29_000);
    expect(remainingAtCall).toBeGreaterThan(27_000);
    expect(context.awsRequestId).toMatch(UUID);
    expect(context).toMatchObject({ functionName: 'send-test', invokedFunctionArn: expect.stringContaining(':eu-west-1:') });
  });
});

describe('createApiServer: the result', () => {
  const use = (handler: LambdaHandler) => api.setHandler(handler);

  it('writes status, headers, cookies and a base64 body back as bytes', async () => {
    const bytes = Buffer.from([1, 2, 3, 250]);
    use(record({ statusCode: 201, headers: { 'X-Thing': 'yes' }, cookies: ['a=1', 'b=2; Path=/'], body: bytes.toString('base64'), isBase64Encoded: true }));
    const response = await raw('/x', { method: 'POST' });
    expect(response.status).toBe(201);
    expect(response.headers['x-thing']).toBe('yes');
    expect(response.headers['set-cookie']).toEqual(['a=1', 'b=2; Path=/']);
    expect(response.body).toEqual(bytes);
  });

  it('treats a plain string result as a 200 JSON body, as API Gateway does', async () => {
    use(record('{"ok":true}'));
    const response = await fetch(`${base}/x`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toEqual({ ok: true });
  });

  it('answers 502 without internals when the handler throws', async () => {
    use(async () => {
      throw new Error('secret internals at handler.ts:12');
    });
    const response = await fetch(`${base}/x`);
    expect(response.status).toBe(502);
    const text = await response.text();
    expect(text).not.toContain('secret internals');
    expect(JSON.parse(text)).toMatchObject({ status: 502, requestId: expect.stringMatching(UUID) });
  });

  it('still answers GET / itself, with the index', async () => {
    use(record({ statusCode: 500 }));
    const response = await fetch(`${base}/`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ service: 'test', ready: true });
  });
});

describe('createApiServer: bodies that are not UTF-8', () => {
  beforeAll(() => {
    answer = record({ statusCode: 204 });
    api.setHandler((event, context) => answer(event, context));
  });

  it('passes a JSON body with bytes that are not UTF-8 as base64, byte for byte, never with U+FFFD', async () => {
    const bytes = Buffer.concat([Buffer.from('{"Subject":"a'), Buffer.from([0xff, 0xfe]), Buffer.from('b"}')]);
    await raw('/v1.2/email/send', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: bytes });
    const [{ event }] = calls as [(typeof calls)[number]];
    expect(event.isBase64Encoded).toBe(true);
    expect(Buffer.from(event.body!, 'base64')).toEqual(bytes);
  });

  it('passes valid UTF-8 as text exactly, a byte order mark included', async () => {
    const text = '\ufeff{"Subject":"Grüße ✓ 😀"}';
    await raw('/v1.2/email/send', { method: 'POST', headers: { 'Content-Type': 'application/json; charset=utf-8' }, body: Buffer.from(text) });
    const [{ event }] = calls as [(typeof calls)[number]];
    expect(event).toMatchObject({ isBase64Encoded: false, body: text });
  });
});

describe('createApiServer: requests the HTTP parser refuses', () => {
  const SEND = '/v1.2/email/send';
  beforeAll(() => {
    answer = record({ statusCode: 204 });
    api.setHandler((event, context) => answer(event, context));
  });

  /** Checks the answer against openapi.json too, as the suites do for every response they fetch. */
  const documented = (response: RawResponse, method = 'POST') =>
    assertResponseMatchesOpenApi({ method, path: SEND, status: response.status, headers: response.headers, body: response.body, localStack: true });

  it.each([
    ['an unknown method (curl -X FOO)', `FOO ${SEND} HTTP/1.1\r\nHost: {host}\r\n\r\n`],
    ['a lower-case method (curl -X post)', `post ${SEND} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`],
  ])('405 with Allow: POST for %s, as a problem document, and closes the connection', async (_label, bytes) => {
    const response = await exchange(bytes);
    const problem = expectRawProblem(response, 405, 'method-not-allowed');
    expect(response.headers.allow).toBe('POST');
    expect(problem.detail).toMatch(/case-sensitive.*POST/);
    // The document describes 405 on the send path under the other methods it names.
    documented(response, 'GET');
    expect(calls).toEqual([]);
  });

  it.each([
    ['FOO /settings', 405, 'GET, HEAD'],
    ['post /v1.2/me/api-key?x=1', 405, 'GET, POST, DELETE'],
    ['get /docs', 405, 'GET, HEAD'],
    ['FOO http://{host}/v1.2/templates/welcome', 405, 'GET, PUT, DELETE'],
    ['post /v1.2/email/sned', 404, undefined],
  ])('answers %s as the API answers any method its path does not serve: %i, Allow %s', async (line, status, allow) => {
    const response = await exchange(`${line} HTTP/1.1\r\nHost: {host}\r\n\r\n`);
    expectRawProblem(response, status, status === 404 ? 'not-found' : 'method-not-allowed');
    expect(response.headers.allow).toBe(allow);
    expect(calls).toEqual([]);
  });

  it('431 for headers over Node\'s 16 KiB limit, as a problem document', async () => {
    const response = await exchange(`POST ${SEND} HTTP/1.1\r\nHost: {host}\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`);
    const problem = expectRawProblem(response, 431, 'request-header-fields-too-large');
    expect(problem.detail).toContain('16384 bytes');
    documented(response);
    expect(calls).toEqual([]);
  });

  it.each([
    ['an unknown HTTP version', `POST ${SEND} HTTP/9.9\r\nHost: {host}\r\n\r\n`],
    ['a request line with a space in the target', `POST /v1.2/email send HTTP/1.1\r\nHost: {host}\r\n\r\n`],
    ['a header name with a space', `POST ${SEND} HTTP/1.1\r\nHost: {host}\r\nBad Header: 1\r\n\r\n`],
    ['a chunked body with a bad chunk size', `POST ${SEND} HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n`],
  ])('400 for %s, as a problem document', async (_label, bytes) => {
    const response = await exchange(bytes);
    expectRawProblem(response, 400, 'malformed-request');
    documented(response);
    expect(calls).toEqual([]);
  });

  it('400 for an HTTP/1.1 request without Host (RFC 9112 3.2), as a problem document; 421 for HTTP/1.0 without one', async () => {
    const response = await exchange(`POST ${SEND} HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`);
    expect(expectRawProblem(response, 400, 'malformed-request').detail).toMatch(/must carry a Host header/);
    documented(response);
    // A target in absolute form names the host, but HTTP/1.1 still requires the header.
    expectRawProblem(await exchange(`GET http://{host}/ HTTP/1.1\r\n\r\n`), 400, 'malformed-request');
    expectRawProblem(await exchange(`POST ${SEND} HTTP/1.0\r\nContent-Length: 2\r\n\r\n{}`), 421, 'misdirected-request');
    expect(calls).toEqual([]);
  });

  it('uses the configured problem type base', async () => {
    const other = createApiServer({ problemTypeBase: 'https://errors.acme.test/p/' });
    await new Promise<void>((resolve) => other.server.listen(0, '127.0.0.1', resolve));
    try {
      const response = await exchange(`FOO ${SEND} HTTP/1.1\r\n\r\n`, `http://127.0.0.1:${(other.server.address() as AddressInfo).port}`);
      expectRawProblem(response, 405, 'method-not-allowed', 'https://errors.acme.test/p/');
    } finally {
      other.server.closeAllConnections();
      await new Promise((resolve) => other.server.close(resolve));
    }
  });

  it('answers a refused request after the response to the earlier one on the same connection', async () => {
    answer = async (event, context) => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      return record({ statusCode: 201, body: 'first' })(event, context);
    };
    // Content-Length says 2, so what follows is parsed as a second request, and refused.
    const response = await exchange(`POST ${SEND} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}garbage\r\n\r\n`);
    expect(response.status).toBe(201);
    expect(calls).toHaveLength(1);
    const second = response.text.slice(response.text.indexOf('first') + 'first'.length);
    expect(second).toMatch(/^HTTP\/1\.1 405 Method Not Allowed\r\n/);
    expect(second).toContain(`"type":"${base}/problems/method-not-allowed"`);
  });

  it('reads the path of a refused request from its own request line, not from an earlier one in the same packet', async () => {
    const response = await exchange(`GET /settings HTTP/1.1\r\nHost: {host}\r\n\r\nFOO /v1.2/me HTTP/1.1\r\nHost: {host}\r\n\r\n`);
    expect(calls.at(-1)?.event.rawPath).toBe('/settings');
    const second = response.text.slice(response.text.indexOf('HTTP/1.1 405'));
    const [statusLine, ...fields] = second.slice(0, second.indexOf('\r\n\r\n')).split('\r\n');
    expect([statusLine, fields.filter((field) => field.toLowerCase().startsWith('allow:'))]).toEqual(['HTTP/1.1 405 Method Not Allowed', ['Allow: GET']]);
  });
});

describe('createApiServer: limits', () => {
  it('answers 504 when the handler outlives the integration timeout', async () => {
    const slow = createApiServer({ handler: () => new Promise(() => undefined), timeoutMs: 50 });
    await new Promise<void>((resolve) => slow.server.listen(0, '127.0.0.1', resolve));
    try {
      const started = Date.now();
      const response = await fetch(`http://127.0.0.1:${(slow.server.address() as AddressInfo).port}/v1.2/email/send`, { method: 'POST' });
      expect(response.status).toBe(504);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      slow.server.closeAllConnections();
      await new Promise((resolve) => slow.server.close(resolve));
    }
  });

  it('states the service\'s body limit, not its own read cap, in its 413', async () => {
    const small = createApiServer({ handler: record({ statusCode: 204 }), maxRequestBytes: 4096, serviceMaxBodyBytes: 2048 });
    await new Promise<void>((resolve) => small.server.listen(0, '127.0.0.1', resolve));
    try {
      const response = await fetch(`http://127.0.0.1:${(small.server.address() as AddressInfo).port}/v1.2/email/send`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: 'x'.repeat(5000),
      });
      expect(response.status).toBe(413);
      expect(await response.json()).toMatchObject({ status: 413, detail: 'The request body must be at most 2048 bytes.' });
      expect(calls).toEqual([]);
    } finally {
      small.server.closeAllConnections();
      await new Promise((resolve) => small.server.close(resolve));
    }
  });
});

describe('createApiServer: Lambda\'s payload limit', () => {
  it('answers 413 without calling the function when the event, escaped, is over Lambda\'s limit, though the body is not', async () => {
    const gate = createApiServer({ handler: record({ statusCode: 204 }), maxEventBytes: 40_000, serviceMaxBodyBytes: 30_000 });
    await new Promise<void>((resolve) => gate.server.listen(0, '127.0.0.1', resolve));
    const post = (body: string) =>
      fetch(`http://127.0.0.1:${(gate.server.address() as AddressInfo).port}/v1.2/email/send`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
    try {
      // 20 000 bytes of letters fit; 20 000 bytes of escaped quotes double in the event and do not.
      expect((await post(JSON.stringify({ text: 'a'.repeat(20_000) }))).status).toBe(204);
      expect(calls).toHaveLength(1);
      const refused = await post(JSON.stringify({ text: '"'.repeat(10_000) }));
      expect(refused.status).toBe(413);
      expect(await refused.json()).toMatchObject({ status: 413, detail: 'The request body must be at most 30000 bytes.' });
      expect(calls).toHaveLength(1);
    } finally {
      gate.server.closeAllConnections();
      await new Promise((resolve) => gate.server.close(resolve));
    }
  });
});
