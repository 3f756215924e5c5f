/**
 * The API reference on the local stack: `GET /openapi.json` is the document itself, `GET /docs`
 * a readable page rendered here from it. The page is self-contained (inline CSS, no script,
 * nothing fetched from elsewhere), so it works offline and under a `default-src 'none'` policy.
 * Local only: in AWS these paths answer 404 like any other.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';

export const OPENAPI_FILE = new URL('../../openapi.json', import.meta.url);
export const DOCS_PATHS = { document: '/openapi.json', page: '/docs' } as const;

type Json = Record<string, any>;

interface Served {
  readonly type: string;
  readonly body: Buffer;
  readonly headers: Readonly<Record<string, string>>;
}

let cache: { document: Served; page: Served } | undefined;

function load(): { document: Served; page: Served } {
  if (!cache) {
    const text = readFileSync(OPENAPI_FILE, 'utf8');
    cache = {
      document: { type: 'application/json', body: Buffer.from(text), headers: {} },
      page: {
        type: 'text/html; charset=utf-8',
        body: Buffer.from(renderDocs(JSON.parse(text) as Json)),
        headers: { 'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'" },
      },
    };
  }
  return cache;
}

/**
 * Answers `GET`/`HEAD` of `/openapi.json` and `/docs`; returns false (touching nothing) for any
 * other request, which then goes on to the handler.
 */
export function serveDocs(req: IncomingMessage, res: ServerResponse): boolean {
  const path = (req.url ?? '/').split('?')[0];
  const which = path === DOCS_PATHS.document ? 'document' : path === DOCS_PATHS.page ? 'page' : undefined;
  if (which === undefined || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
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

const escape = (text: unknown): string =>
  String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Inline Markdown as the document uses it: `code`, **bold**, *emphasis*. */
function inline(text: string): string {
  return escape(text)
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
    .replace(/\*([^*\s][^*]*)\*/g, '<em>$1</em>');
}

/** Block Markdown as the document uses it: paragraphs and pipe tables. */
function markdown(text: string | undefined): string {
  if (!text) return '';
  return text
    .split(/\n{2,}/)
    .map((block) => {
      const lines = block.split('\n');
      if (lines.every((line) => line.trim().startsWith('|'))) {
        const cells = (line: string) => line.trim().replace(/^\||\|$/g, '').split('|').map((cell) => cell.trim());
        const [head, , ...rows] = lines;
        return `<table><thead><tr>${cells(head!).map((c) => `<th>${inline(c)}</th>`).join('')}</tr></thead><tbody>${rows
          .map((row) => `<tr>${cells(row).map((c) => `<td>${inline(c)}</td>`).join('')}</tr>`)
          .join('')}</tbody></table>`;
      }
      return `<p>${lines.map(inline).join('<br>')}</p>`;
    })
    .join('\n');
}

const refName = (ref: string) => ref.split('/').pop()!;
const anchor = (kind: string, name: string) => `${kind}-${name.replace(/[^A-Za-z0-9_-]/g, '_')}`;

/** One line saying what a schema accepts: type, format, limits, enum. */
function describeSchema(schema: Json | undefined): string {
  if (!schema) return '';
  if (schema.$ref) return `<a href="#${anchor('schema', refName(schema.$ref))}">${escape(refName(schema.$ref))}</a>`;
  const parts: string[] = [];
  const types = ([] as string[]).concat(schema.type ?? []);
  if (types.includes('array')) parts.push(`array of ${describeSchema(schema.items) || 'any'}`);
  else if (types.length > 0) parts.push(types.map(escape).join(' | '));
  if (types.includes('array') && types.includes('null')) parts.push('or null');
  if (schema.allOf) parts.push(schema.allOf.map(describeSchema).join(' and '));
  if (schema.oneOf) parts.push(`one of ${schema.oneOf.map(describeSchema).join(', ')}`);
  if (schema.format) parts.push(`<code>${escape(schema.format)}</code>`);
  if (schema.const !== undefined) parts.push(`= <code>${escape(JSON.stringify(schema.const))}</code>`);
  if (schema.enum) parts.push(`one of ${schema.enum.map((v: unknown) => `<code>${escape(JSON.stringify(v))}</code>`).join(', ')}`);
  const range = (min: unknown, max: unknown, unit: string) =>
    min !== undefined || max !== undefined ? `${min ?? 0}..${max ?? '∞'} ${unit}` : undefined;
  for (const limit of [range(schema.minLength, schema.maxLength, 'characters'), range(schema.minItems, schema.maxItems, 'items'), range(schema.minimum, schema.maximum, '')]) {
    if (limit) parts.push(escape(limit.trim()));
  }
  if (schema.pattern) parts.push(`matching <code>${escape(schema.pattern)}</code>`);
  return parts.join(', ');
}

function propertiesTable(schema: Json): string {
  const properties = Object.entries<Json>(schema.properties ?? {});
  if (properties.length === 0) return '';
  const required = new Set<string>(schema.required ?? []);
  const rows = properties.map(
    ([name, property]) =>
      `<tr><td><code>${escape(name)}</code>${required.has(name) ? ' <span class="req">required</span>' : ''}</td><td>${describeSchema(property)}</td><td>${markdown(property.description)}</td></tr>`,
  );
  const closed = schema.additionalProperties === false ? '<p class="note">No other fields are allowed.</p>' : '';
  return `<table><thead><tr><th>Field</th><th>Schema</th><th>Description</th></tr></thead><tbody>${rows.join('')}</tbody></table>${closed}`;
}

const json = (value: unknown) => `<pre>${escape(JSON.stringify(value, null, 2))}</pre>`;

function examples(media: Json): string {
  return Object.entries<Json>(media.examples ?? {})
    .map(([name, example]) => `<details><summary>Example: ${escape(example.summary ?? name)}</summary>${json(example.value)}</details>`)
    .join('');
}

function resolve(document: Json, node: Json): Json {
  return typeof node?.$ref === 'string' ? resolve(document, node.$ref.slice(2).split('/').reduce((at: Json, key: string) => at?.[key], document)) : node;
}

function operationHtml(document: Json, path: string, method: string, operation: Json, localOnly: boolean): string {
  const parameters = (operation.parameters ?? []).map((p: Json) => resolve(document, p));
  const parameterRows = parameters
    .map((p: Json) => `<tr><td><code>${escape(p.name)}</code> (${escape(p.in)})${p.required ? ' <span class="req">required</span>' : ''}</td><td>${describeSchema(p.schema)}</td><td>${markdown(p.description)}</td></tr>`)
    .join('');
  const security = (operation.security ?? document.security ?? []).flatMap((s: Json) => Object.keys(s));
  const body = operation.requestBody
    ? `<h4>Request body</h4>${markdown(operation.requestBody.description)}${Object.entries<Json>(operation.requestBody.content ?? {})
        .map(([type, media]) => `<p><code>${escape(type)}</code>: ${describeSchema(media.schema)}</p>${examples(media)}`)
        .join('')}`
    : '';
  const responses = Object.entries<Json>(operation.responses ?? {})
    .map(([status, raw]) => {
      const response = resolve(document, raw);
      const headers = Object.entries<Json>(response.headers ?? {}).map(([name, h]) => {
        const header = resolve(document, h);
        return `<li><code>${escape(name)}</code>${header.required ? ' <span class="req">always</span>' : ''}: ${describeSchema(header.schema)}. ${inline(header.description ?? '')}</li>`;
      });
      const content = Object.entries<Json>(response.content ?? {})
        .map(([type, media]) => `<p><code>${escape(type)}</code>: ${describeSchema(media.schema)}</p>${examples(media)}`)
        .join('');
      return `<div class="response"><h5><span class="status s${escape(status[0])}">${escape(status)}</span></h5>${markdown(response.description)}${headers.length ? `<ul>${headers.join('')}</ul>` : ''}${content}</div>`;
    })
    .join('');
  return `<section class="operation" id="${anchor('op', operation.operationId ?? `${method}${path}`)}">
<h3><span class="method">${escape(method.toUpperCase())}</span> <code>${escape(path)}</code>${localOnly ? ' <span class="local">local stack only</span>' : ''}</h3>
<p class="summary">${inline(operation.summary ?? '')}</p>${markdown(operation.description)}
${security.length ? `<p>Authentication: ${security.map((name: string) => `<a href="#auth">${escape(name)}</a>`).join(', ')}</p>` : '<p>No authentication.</p>'}
${parameterRows ? `<h4>Parameters</h4><table><thead><tr><th>Name</th><th>Schema</th><th>Description</th></tr></thead><tbody>${parameterRows}</tbody></table>` : ''}
${body}<h4>Responses</h4>${responses}</section>`;
}

/** The whole document as one HTML page. */
export function renderDocs(document: Json): string {
  const info = document.info ?? {};
  const operations: string[] = [];
  for (const [path, item] of Object.entries<Json>(document.paths ?? {})) {
    const methods = Object.keys(item).filter((key) => ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'].includes(key));
    // Operations that only answer 405 are summed up in one line rather than repeated.
    const refused = methods.filter((m) => Object.keys(item[m].responses ?? {}).join() === '405');
    for (const method of methods.filter((m) => !refused.includes(m))) operations.push(operationHtml(document, path, method, item[method], item['x-local-only'] === true));
    if (refused.length > 0) {
      operations.push(`<p class="note">Other methods on <code>${escape(path)}</code> (${refused.map((m) => m.toUpperCase()).join(', ')}) answer <a href="#${anchor('response', 'MethodNotAllowed')}">405</a> with <code>Allow</code>.</p>`);
    }
  }
  const servers = (document.servers ?? [])
    .map((server: Json) => `<li><code>${escape(server.url)}</code>: ${inline(server.description ?? '')}</li>`)
    .join('');
  const auth = Object.entries<Json>(document.components?.securitySchemes ?? {})
    .map(([name, scheme]) => `<h3 id="auth">${escape(name)}: HTTP ${escape(scheme.scheme)} (${escape(scheme.bearerFormat ?? '')})</h3>${markdown(scheme.description)}`)
    .join('');
  const schemas = Object.entries<Json>(document.components?.schemas ?? {})
    .map(
      ([name, schema]) =>
        `<section class="schema" id="${anchor('schema', name)}"><h3>${escape(name)}</h3><p>${describeSchema(schema)}</p>${markdown(schema.description)}${propertiesTable(schema)}<details><summary>JSON Schema</summary>${json(schema)}</details></section>`,
    )
    .join('');
  // Responses that belong to no single operation: unknown paths (404), other methods (405).
  const shared = Object.entries({ NotFound: 404, MethodNotAllowed: 405 })
    .filter(([name]) => document.components?.responses?.[name])
    .map(([name, status]) => {
      const response = resolve(document, document.components.responses[name]);
      return `<section class="response" id="${anchor('response', name)}"><h3><span class="status s4">${status}</span> ${escape(name)}</h3>${markdown(response.description)}${Object.values<Json>(response.content ?? {}).map(examples).join('')}</section>`;
    })
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(info.title)} ${escape(info.version)}: API reference</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:70rem;margin:0 auto;padding:1rem 2rem;color:#1b1f24}
code,pre{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px}code{background:#f3f4f6;padding:0 .2em;border-radius:3px}
pre{background:#f6f8fa;padding:.75rem;overflow:auto;border-radius:4px}
table{border-collapse:collapse;margin:.5rem 0;width:100%}th,td{border:1px solid #d0d7de;padding:.3rem .5rem;text-align:left;vertical-align:top}th{background:#f6f8fa}
.operation,.schema{border-top:2px solid #d0d7de;margin-top:2rem}.method{background:#0969da;color:#fff;padding:.1rem .5rem;border-radius:3px}
.status{padding:.05rem .4rem;border-radius:3px;color:#fff;background:#57606a}.s2{background:#1a7f37}.s4{background:#9a6700}.s5{background:#cf222e}
.req{color:#cf222e;font-size:12px}.local{background:#ddf4ff;color:#0969da;font-size:12px;padding:.1rem .4rem;border-radius:3px}.note{color:#57606a}
.response{margin-left:1rem;border-left:3px solid #d0d7de;padding-left:1rem}summary{cursor:pointer;color:#0969da}
</style></head><body>
<header><h1>${escape(info.title)} <small>${escape(info.version)}</small></h1><p><strong>${inline(info.summary ?? '')}</strong></p>
<p>OpenAPI ${escape(document.openapi)} document: <a href="${DOCS_PATHS.document}">openapi.json</a>.</p></header>
${markdown(info.description)}
<h2>Servers</h2><ul>${servers}</ul>
<h2>Authentication</h2>${auth}
<h2>Operations</h2>${operations.join('\n')}
<h2>Unknown paths and methods</h2>${shared}
<h2>Schemas</h2>${schemas}
</body></html>
`;
}
