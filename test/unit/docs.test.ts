import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo, Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OPENAPI_FILE, serveDocs } from '../../infra/local/docs';
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

  it('serves GET /docs: a self-contained page naming every operation, status and schema', async () => {
    const { response, body } = await get('/docs?from=test');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    const document = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8'));
    expect(body).toContain(`<title>${document.info.title} ${document.info.version}`);
    expect(body).toContain('<span class="method">POST</span> <code>/v1.2/email/send</code>');
    for (const status of Object.keys(document.paths['/v1.2/email/send'].post.responses)) expect(body).toContain(`>${status}</span>`);
    for (const schema of Object.keys(document.components.schemas)) expect(body).toContain(`id="schema-${schema}"`);
    expect(body).toContain('<code>Idempotency-Key</code>');
    expect(body).toContain('<code>MessageRejected</code>');
    // Nothing runs and nothing is loaded from elsewhere: no script, no stylesheet or image link.
    expect(body).not.toMatch(/<script|<link|<img|<iframe|\ssrc=|url\(/i);
    expect(body).not.toMatch(/href="(?!#|\/openapi\.json")/);
  });

  it('escapes what it renders from the document', async () => {
    const { body } = await get('/docs');
    // The document's own markup-like text (an HTML example body) appears escaped, never as markup.
    expect(body).toContain('&lt;p&gt;Thanks for your order.&lt;/p&gt;');
    expect(body).not.toContain('<p>Thanks for your order.</p>');
  });

  it('answers HEAD with the headers only', async () => {
    const { response, body } = await get('/docs', 'HEAD');
    expect(response.status).toBe(200);
    expect(Number(response.headers.get('content-length'))).toBeGreaterThan(1000);
    expect(body).toBe('');
  });

  it('leaves every other request to the next handler', async () => {
    fellThrough = [];
    for (const [method, path] of [['POST', '/openapi.json'], ['DELETE', '/docs'], ['GET', '/docs/'], ['GET', '/v1.2/email/send'], ['GET', '/openapi.yaml']] as const) {
      expect((await fetch(`${base}${path}`, { method })).status).toBe(404);
    }
    expect(fellThrough).toEqual(['POST /openapi.json', 'DELETE /docs', 'GET /docs/', 'GET /v1.2/email/send', 'GET /openapi.yaml']);
  });
});
