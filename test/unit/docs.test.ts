import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo, Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DOCS_POLICY, OPENAPI_FILE, REDOC_FILE, serveDocs } from '../../infra/local/docs';
import { openApiProblems } from '../support/openapi';

let server: Server;
let base: string;
let fellThrough: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    if (serveDocs(req, res)) return;
    fellThrough.push(`${req.method} ${req.url}`);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => new Promise<void>((resolve) => server.close(() => resolve())));

/** The response, also checked against what openapi.json says of these local-only paths. */
async function get(path: string, method = 'GET'): Promise<{ response: Response; body: string }> {
  const response = await fetch(`${base}${path}`, { method });
  const body = await response.text();
  expect(openApiProblems({ method, path: path.split('?')[0]!, status: response.status, headers: response.headers, body, localStack: true })).toEqual([]);
  return { response, body };
}

describe('serveDocs', () => {
  it('serves GET /openapi.json: the tracked document, byte for byte', async () => {
    const { response, body } = await get('/openapi.json');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(body).toBe(readFileSync(OPENAPI_FILE, 'utf8'));
  });

  it('serves GET /docs: a page on which Redoc renders /openapi.json, with no script of its own', async () => {
    const { response, body } = await get('/docs?from=test');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const document = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8'));
    expect(body).toContain(`<title>${document.info.title} ${document.info.version}: API reference</title>`);
    expect(body).toContain('<redoc spec-url="/openapi.json"');
    // One script, the renderer from this origin; nothing else is loaded.
    expect(body.match(/<script\b[^>]*>/g)).toEqual(['<script src="/docs/redoc.standalone.js">']);
    expect(body).not.toMatch(/https?:|\/\/|<link(?![^>]*href="data:)|<img|<iframe/i);
  });

  it('sends a Content-Security-Policy that lets the page reach nothing but its own origin', async () => {
    const { response } = await get('/docs');
    const policy = response.headers.get('content-security-policy')!;
    expect(policy).toBe(DOCS_POLICY);
    const directives = new Map(policy.split(';').map((directive) => directive.trim().split(/\s+/)).map(([name, ...sources]) => [name!, sources]));
    expect(directives.get('default-src')).toEqual(["'none'"]);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
    // No host, no scheme that reaches the network, and no inline or eval'd script.
    for (const [name, sources] of directives) {
      for (const source of sources) expect([name, source]).toEqual([name, expect.stringMatching(/^('self'|'none'|'unsafe-inline'|blob:|data:)$/)]);
    }
    expect(directives.get('script-src')).toEqual(["'self'"]);
  });

  it('serves the renderer the page loads: Redoc\'s standalone bundle from node_modules', async () => {
    const { response, body } = await get('/docs/redoc.standalone.js');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(REDOC_FILE).toMatch(/node_modules[/\\]redoc[/\\]bundles[/\\]redoc\.standalone\.js$/);
    expect(body).toBe(readFileSync(REDOC_FILE, 'utf8'));
  });

  it('answers HEAD with the headers only', async () => {
    const { response, body } = await get('/docs', 'HEAD');
    expect(response.status).toBe(200);
    expect(Number(response.headers.get('content-length'))).toBeGreaterThan(200);
    expect(body).toBe('');
  });

  it.each([
    ['POST', '/openapi.json'],
    ['PUT', '/docs'],
    ['DELETE', '/docs'],
    ['PATCH', '/docs/redoc.standalone.js'],
    ['OPTIONS', '/openapi.json'],
  ])('answers %s %s with 405, Allow: GET, HEAD and the method-not-allowed problem', async (method, path) => {
    const { response, body } = await get(path, method);
    expect([response.status, response.headers.get('allow'), response.headers.get('content-type')]).toEqual([405, 'GET, HEAD', 'application/problem+json']);
    expect(JSON.parse(body)).toMatchObject({ status: 405, type: `${base}/problems/method-not-allowed`, detail: `${method} is not allowed here; use GET, HEAD.` });
  });

  it('leaves every other path to the next handler', async () => {
    fellThrough = [];
    for (const [method, path] of [['GET', '/docs/'], ['GET', '/v1.2/email/send'], ['POST', '/openapi.yaml']] as const) {
      expect((await fetch(`${base}${path}`, { method })).status).toBe(404);
    }
    expect(fellThrough).toEqual(['GET /docs/', 'GET /v1.2/email/send', 'POST /openapi.yaml']);
  });
});
