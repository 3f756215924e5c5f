/**
 * The API reference on the local stack: `GET /openapi.json` is the document itself, `GET /docs`
 * a page on which Redoc renders it. Redoc's standalone bundle is served from node_modules
 * (`GET /docs/redoc.standalone.js`), so the page loads nothing from elsewhere and works offline.
 * Local only: in AWS these paths answer 404 like any other.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { DEFAULTS } from '../../functions/shared/runtime/config';
import { pageMethodAllowed } from './gateway/problems';
import { htmlDocument } from '../../functions/shared/http/html';

export const OPENAPI_FILE = new URL('../../openapi.json', import.meta.url);
export const REDOC_FILE = createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js');
export const DOCS_PATHS = { document: '/openapi.json', page: '/docs', renderer: '/docs/redoc.standalone.js' } as const;

type Page = keyof typeof DOCS_PATHS;

/**
 * What the page may load: the renderer and the document from this origin, and what Redoc does
 * with them (styles it injects inline, a search worker it starts from a blob, inline SVG icons).
 */
export const DOCS_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

interface Served {
  readonly type: string;
  readonly body: Buffer;
  readonly headers?: Readonly<Record<string, string>>;
}

let cache: Record<Page, Served> | undefined;

function load(): Record<Page, Served> {
  if (!cache) {
    const text = readFileSync(OPENAPI_FILE, 'utf8');
    const { title, version } = (JSON.parse(text) as { info: { title: string; version: string } }).info;
    cache = {
      document: { type: 'application/json', body: Buffer.from(text) },
      page: { type: 'text/html; charset=utf-8', body: Buffer.from(page(`${title} ${version}: API reference`)), headers: { 'Content-Security-Policy': DOCS_POLICY } },
      renderer: { type: 'text/javascript; charset=utf-8', body: readFileSync(REDOC_FILE) },
    };
  }
  return cache;
}

/** Redoc starts by itself on a `<redoc spec-url>` element, so the page needs no script of its own. */
function page(title: string): string {
  return htmlDocument(
    title,
    '<link rel="icon" href="data:,">\n<style>body { margin: 0; }</style>',
    `
<redoc spec-url="${DOCS_PATHS.document}" required-props-first expand-responses="200,207"></redoc>
<script src="${DOCS_PATHS.renderer}"></script>
`,
  );
}

/**
 * Answers the documentation paths: `GET`/`HEAD`, and 405 with `Allow` to other methods. Returns
 * false (touching nothing) for any other path, which then goes on to the handler.
 */
export function serveDocs(req: IncomingMessage, res: ServerResponse, problemTypeBase: string = DEFAULTS.problemTypeBase): boolean {
  const path = (req.url ?? '/').split('?')[0];
  const which = (Object.keys(DOCS_PATHS) as Page[]).find((key) => DOCS_PATHS[key] === path);
  if (which === undefined) return false;
  if (!pageMethodAllowed(req, res, problemTypeBase)) return true;
  const served = load()[which];
  res.writeHead(200, {
    ...served.headers,
    'Content-Type': served.type,
    'Content-Length': served.body.length,
    'Cache-Control': 'no-cache',
    'X-Content-Type-Options': 'nosniff',
  });
  res.end(req.method === 'HEAD' ? undefined : served.body);
  return true;
}
