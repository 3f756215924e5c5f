/**
 * Checks real responses against `openapi.json`, so the document cannot drift from the code:
 * the harness passes every handler response through `assertResponseMatchesOpenApi`, and HTTP
 * suites can do the same with `checkedFetch` / `validateFetchesTo`.
 *
 * A response must be documented for its path, method and status (unknown paths fall back to
 * `components.responses.NotFound`), carry a documented Content-Type, a body that validates
 * against that media type's schema (JSON Schema 2020-12, Ajv), every required documented header
 * with a valid value, and, for a problem document, a `type` ending in one of the response's
 * `x-problem-types`.
 */
import { readFileSync } from 'node:fs';
import type { ErrorObject, ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parseEmailAddress } from '../../functions/shared/domain/email-address';
import { methodsServedAt } from '../../functions/shared/http/api-routes';
import { PAGE_METHODS } from '../../infra/local/gateway/problems';

export const OPENAPI_PATH = new URL('../../openapi.json', import.meta.url);

type Json = Record<string, any>;

/** The document, parsed once per test file. */
export const openApiDocument: Json = JSON.parse(readFileSync(OPENAPI_PATH, 'utf8'));

const SCHEMAS_ID = 'urn:email-send-api:openapi-schemas';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** `#/components/schemas/X` refs rewritten to `prefix + X`, so schemas compile outside the document. */
function rewriteRefs(node: unknown, prefix: string): unknown {
  if (Array.isArray(node)) return node.map((item) => rewriteRefs(item, prefix));
  if (typeof node !== 'object' || node === null) return node;
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => [
      key,
      key === '$ref' && typeof value === 'string' && value.startsWith('#/components/schemas/')
        ? `${prefix}${value.slice('#/components/schemas/'.length)}`
        : rewriteRefs(value, prefix),
    ]),
  );
}

function createAjv(options: { coerceTypes?: boolean } = {}): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: true,
    // Unknown keywords and formats are errors: a typo in the document must fail, not pass silently.
    strictSchema: true,
    strictNumbers: true,
    strictTuples: true,
    strictTypes: false,
    strictRequired: false,
    allowUnionTypes: true,
    validateFormats: true,
    ...options,
  });
  addFormats(ajv);
  // The service's own address rule (ASCII local part, IDN domain), which `idn-email` describes.
  ajv.addFormat('idn-email', (value: string) => parseEmailAddress(value) !== undefined);
  ajv.addSchema({ $id: SCHEMAS_ID, $defs: rewriteRefs(openApiDocument.components?.schemas ?? {}, '#/$defs/') as Json });
  return ajv;
}

let bodies: Ajv2020 | undefined;
let headerValues: Ajv2020 | undefined;
const compiled = new WeakMap<object, ValidateFunction>();

/** Compiles (once) a schema taken from the document; refs to components/schemas resolve. */
export function compileSchema(schema: Json): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    bodies ??= createAjv();
    validate = bodies.compile(rewriteRefs(schema, `${SCHEMAS_ID}#/$defs/`) as Json);
    compiled.set(schema, validate);
  }
  return validate;
}

const headerValidators = new WeakMap<object, ValidateFunction>();

/** Header values are strings on the wire; an `integer` schema (Retry-After) is checked after coercion. */
function compileHeaderSchema(schema: Json): ValidateFunction {
  let validate = headerValidators.get(schema);
  if (!validate) {
    headerValues ??= createAjv({ coerceTypes: true });
    validate = headerValues.compile({ type: 'object', properties: { value: rewriteRefs(schema, `${SCHEMAS_ID}#/$defs/`) }, required: ['value'] });
    headerValidators.set(schema, validate);
  }
  return validate;
}

/** Follows a local `$ref` (`#/components/...`) to its target. */
export function resolveRef<T = Json>(node: Json): T {
  let current = node;
  for (let hops = 0; typeof current?.$ref === 'string'; hops++) {
    if (hops > 10 || !current.$ref.startsWith('#/')) throw new Error(`openapi.json: cannot resolve $ref ${current.$ref}`);
    const target: Json | undefined = current.$ref
      .slice(2)
      .split('/')
      .map((segment: string) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce((parent: Json | undefined, key: string) => parent?.[key], openApiDocument);
    if (target === undefined) throw new Error(`openapi.json: $ref ${node.$ref} points nowhere`);
    current = target;
  }
  return current as T;
}

export interface ObservedResponse {
  readonly method: string;
  /** The request path, without query string. */
  readonly path: string;
  readonly status: number;
  readonly headers: Headers | Readonly<Record<string, string | number | boolean | undefined>>;
  /** The raw body text; empty or undefined for none. */
  readonly body?: string | undefined;
  /**
   * Whether the local stack answered (over HTTP) rather than the Lambda handler: only then do
   * the paths marked `x-local-only` (`GET /`, `/openapi.json`, `/docs`) exist.
   */
  readonly localStack?: boolean;
}

function headerMap(headers: ObservedResponse['headers']): Map<string, string> {
  const map = new Map<string, string>();
  const entries = headers instanceof Headers ? [...headers.entries()] : Object.entries(headers);
  for (const [name, value] of entries) if (value !== undefined) map.set(name.toLowerCase(), String(value));
  return map;
}

function describeErrors(errors: readonly ErrorObject[] | null | undefined, where: string): string[] {
  return (errors ?? []).slice(0, 12).map((error) => {
    const params = Object.keys(error.params).length > 0 ? ` ${JSON.stringify(error.params)}` : '';
    return `${where}${error.instancePath || ''} ${error.message ?? error.keyword}${params}`;
  });
}

/**
 * The documented response for a method, path and status: its JSON location and the object.
 * A path the document does not list gets the generic 404 response; a method a local page does
 * not list, the pages' 405 (`x-local-page-method-not-allowed`, kept outside `components` because no
 * operation can refer to it); a method another path does not list, the generic 405
 * (`MethodNotAllowed`, or `HeadNotAllowed` to HEAD): as the document's description says.
 */
export function findResponse(method: string, path: string, status: number, localStack = false): { where: string; response: Json } | { problem: string } {
  const documented = documentedPath(path);
  const candidate: Json | undefined = documented === undefined ? undefined : openApiDocument.paths[documented];
  const pathItem = candidate && (localStack || candidate['x-local-only'] !== true) ? candidate : undefined;
  const verb = method.toLowerCase();
  const listed: Json | undefined = (METHODS as readonly string[]).includes(verb) ? pathItem?.[verb] : undefined;
  const served = servedAt(path, pathItem);
  if (!listed && status === 405 && pathItem && pathItem['x-local-only'] !== true && !served.includes(verb.toUpperCase())) {
    const generic = verb === 'head' ? 'HeadNotAllowed' : 'MethodNotAllowed';
    return { where: `components.responses.${generic}`, response: resolveRef(openApiDocument.components.responses[generic]) };
  }
  // HEAD is GET without a body where it is served (the pages), unless documented on its own.
  const operation: Json | undefined = listed ?? (verb === 'head' && served.includes('HEAD') ? pathItem?.get : undefined);
  if (!operation) {
    if (pathItem?.['x-local-only'] === true) {
      if (status === 405) return { where: 'x-local-page-method-not-allowed', response: resolveRef(openApiDocument['x-local-page-method-not-allowed']) };
      return { problem: `${method.toUpperCase()} ${path}: the page exists, so a method it does not serve is documented as 405 (got ${status})` };
    }
    if (status === 404) return { where: 'components.responses.NotFound', response: resolveRef(openApiDocument.components.responses.NotFound) };
    return { problem: `${method.toUpperCase()} ${path} is not documented, and only a 404 is documented for what is not (got ${status})` };
  }
  const responses: Json = operation.responses ?? {};
  const key = [String(status), `${String(status)[0]}XX`, 'default'].find((candidate) => responses[candidate] !== undefined);
  if (key === undefined) return { problem: `${method.toUpperCase()} ${path} does not document status ${status}` };
  return { where: `paths["${documented}"].${verb}.responses.${key}`, response: resolveRef(responses[key]) };
}

/** The methods served at a path, as `Allow` names them: the local pages', or the route table's (api-routes.ts). */
function servedAt(path: string, pathItem: Json | undefined): readonly string[] {
  return pathItem?.['x-local-only'] === true ? PAGE_METHODS : methodsServedAt(path);
}

/** The document's path for a request path: itself, or a template whose `{name}` segments match one segment each. */
function documentedPath(path: string): string | undefined {
  const paths: Json = openApiDocument.paths ?? {};
  if (paths[path]) return path;
  return Object.keys(paths).find((template) => {
    if (!template.includes('{')) return false;
    const pattern = template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')).join('[^/]+');
    return new RegExp(`^${pattern}$`).test(path);
  });
}

/**
 * Every way the response departs from the document; empty when it matches. On the local stack, a
 * response that departs from its path's own entry may still be the local gateway's own answer for
 * its status (`x-local-gateway-responses`), which any path may get, as the description says.
 */
export function openApiProblems(observed: ObservedResponse): string[] {
  const found = findResponse(observed.method, observed.path, observed.status, observed.localStack);
  const own = 'problem' in found ? [found.problem] : responseProblems(observed, found.where, found.response);
  // The document's Allow is any of the API's method lists; the one a path serves is its own.
  const allow = headerMap(observed.headers).get('allow');
  const documented = documentedPath(observed.path);
  const served = servedAt(observed.path, documented === undefined ? undefined : openApiDocument.paths[documented]);
  if (observed.status === 405 && allow !== undefined && served.length > 0 && allow !== served.join(', ')) own.push(`Allow is "${allow}", but ${observed.path} serves ${served.join(', ')}`);
  const gateway: Json | undefined = observed.localStack ? openApiDocument['x-local-gateway-responses']?.[String(observed.status)] : undefined;
  if (own.length === 0 || gateway === undefined) return own;
  return responseProblems(observed, `x-local-gateway-responses.${observed.status}`, resolveRef(gateway)).length === 0 ? [] : own;
}

/** How the response departs from one documented response. */
function responseProblems(observed: ObservedResponse, where: string, response: Json): string[] {
  const problems: string[] = [];
  const headers = headerMap(observed.headers);

  for (const [name, header] of Object.entries<Json>(response.headers ?? {})) {
    const definition = resolveRef(header);
    const value = headers.get(name.toLowerCase());
    if (value === undefined) {
      if (definition.required) problems.push(`header ${name} is required by ${where}`);
      continue;
    }
    if (definition.schema) {
      const validate = compileHeaderSchema(definition.schema);
      if (!validate({ value })) problems.push(...describeErrors(validate.errors, `header ${name}`).map((text) => `${text} (value "${value}")`));
    }
  }

  const content: Json | undefined = response.content;
  const body = observed.body ?? '';
  const isHead = observed.method.toUpperCase() === 'HEAD';
  if (!content || Object.keys(content).length === 0) {
    if (body !== '' && !isHead) problems.push(`${where} documents no body, but one was sent`);
    return problems;
  }
  const contentType = headers.get('content-type');
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase();
  const media: Json | undefined = mediaType === undefined ? undefined : content[mediaType];
  if (!media) {
    problems.push(`Content-Type ${contentType ?? '(none)'} is not one of ${Object.keys(content).join(', ')} (${where})`);
    return problems;
  }
  if (isHead && body === '') return problems;

  let value: unknown = body;
  if (mediaType === 'application/json' || mediaType!.endsWith('+json')) {
    try {
      value = JSON.parse(body);
    } catch {
      problems.push(`the ${mediaType} body is not JSON (${where})`);
      return problems;
    }
  }
  if (media.schema) {
    const validate = compileSchema(media.schema);
    if (!validate(value)) problems.push(...describeErrors(validate.errors, 'body'));
  }

  const slugs: string[] | undefined = response['x-problem-types'];
  if (mediaType === 'application/problem+json' && slugs) {
    const type = (value as Json | null)?.type;
    const known = typeof type === 'string' && slugs.some((slug) => type.endsWith(slug) && !/[a-z0-9-]/.test(type.charAt(type.length - slug.length - 1)));
    if (!known) problems.push(`problem type ${JSON.stringify(type)} is not one of ${where}'s x-problem-types (${slugs.join(', ')})`);
  }
  return problems;
}

/** Throws, listing every departure, when the response is not what the document promises. */
export function assertResponseMatchesOpenApi(observed: ObservedResponse): void {
  const problems = openApiProblems(observed);
  if (problems.length > 0) {
    const excerpt = (observed.body ?? '').slice(0, 600);
    throw new Error(
      `${observed.method.toUpperCase()} ${observed.path} → ${observed.status} does not match openapi.json:\n  - ${problems.join('\n  - ')}\n  body: ${excerpt}`,
    );
  }
}

const nativeFetch: typeof fetch = globalThis.fetch.bind(globalThis);

function methodOf(input: Parameters<typeof fetch>[0], init: RequestInit | undefined): string {
  return init?.method ?? (input instanceof Request ? input.method : 'GET');
}

function urlOf(input: Parameters<typeof fetch>[0]): URL {
  return new URL(input instanceof Request ? input.url : String(input));
}

async function fetchAndCheck(input: Parameters<typeof fetch>[0], init?: RequestInit): Promise<Response> {
  const response = await nativeFetch(input, init);
  const body = await response.clone().text();
  assertResponseMatchesOpenApi({ method: methodOf(input, init), path: urlOf(input).pathname, status: response.status, headers: response.headers, body, localStack: true });
  return response;
}

/** `fetch` to the local stack, then the response is checked against the document (throws when it does not match). */
export const checkedFetch: typeof fetch = fetchAndCheck;

/**
 * Checks every `fetch` of this test file to a URL under `baseUrl` (e.g. a local stack's
 * `apiUrl`); other URLs (the SES emulator) pass unchecked. Returns a function that undoes it.
 */
export function validateFetchesTo(baseUrl: string): () => void {
  const base = baseUrl.replace(/\/+$/, '');
  const previous = globalThis.fetch;
  const wrapped: typeof fetch = (input, init) => {
    const url = urlOf(input).href;
    return url === base || url.startsWith(`${base}/`) ? fetchAndCheck(input, init) : previous(input, init);
  };
  globalThis.fetch = wrapped;
  return () => {
    if (globalThis.fetch === wrapped) globalThis.fetch = previous;
  };
}
