/**
 * Rendering a stored template version for one message or one preview, with the checks a written
 * message gets (CONTRACT sections 2 and 14): a subject that is not empty, has no line breaks or
 * control characters and fits a header line, bodies not empty, well-formed Unicode, and a size
 * limit on the whole. Problems carry JSON pointers below the caller's base (`/Messages/3/Template`
 * or the render request's root).
 *
 * The engine is imported on first use only: a send without a template never loads Handlebars.
 * Compiled templates are kept per instance by (Organization, name, version), and one is reused only
 * for the very text it was compiled from: a template deleted and made again starts at version 1
 * with other text.
 */
import { CONTROL_CHARACTERS, MAX_SUBJECT_LENGTH } from '../domain/header-safety';
import { codePointLength, isWellFormedText } from '../domain/unicode';
import { ExpiringCache } from '../runtime/expiring-cache';
import { unescapePointer } from '../http/json-pointer';
import type { FieldProblem } from '../http/problems';
import type { Rendered } from './engine';
import type { TemplateVersion } from './template-rules';
import { TEMPLATE_FIELDS, TEMPLATE_LIMITS } from './template-rules';

type Engine = typeof import('./engine');
let engine: Promise<Engine> | undefined;
/** The Handlebars engine, loaded once per instance on first use. */
export const loadEngine = (): Promise<Engine> => (engine ??= import('./engine'));

type Compiled = ReturnType<Engine['compileTemplate']>;
const compiledCache = new ExpiringCache<string, { readonly from: TemplateVersion; readonly compiled: Compiled }>({ max: 500 });

const sameText = (a: TemplateVersion, b: TemplateVersion): boolean => TEMPLATE_FIELDS.every((field) => a[field] === b[field]);

/** `version` compiled, from the cache when the cached entry was compiled from the same text. */
function compiledFor(compileTemplate: Engine['compileTemplate'], organizationId: string, version: TemplateVersion): Compiled {
  const key = `${organizationId.toLowerCase()}\n${version.Name}\n${version.Version}`;
  const cached = compiledCache.get(key);
  if (cached && sameText(cached.from, version)) return cached.compiled;
  const compiled = compileTemplate(version);
  compiledCache.set(key, { from: version, compiled });
  return compiled;
}

export interface RenderedMessage {
  readonly subject: string;
  readonly text?: string;
  readonly html?: string;
}

/**
 * Renders `version` with `variables`; the problems found (pointers below `base`: missing variables
 * at `${base}/Variables/…`, rule breaks at `${base}`) or the message.
 */
export async function renderVersion(
  organizationId: string,
  version: TemplateVersion,
  variables: Readonly<Record<string, unknown>>,
  base: string,
): Promise<RenderResult> {
  return renderWith(await loadEngine(), organizationId, version, variables, base);
}

export interface RenderResult {
  readonly message?: RenderedMessage;
  readonly problems: FieldProblem[];
}

/**
 * `renderVersion` with the engine already loaded, synchronously: a batch renders its messages in
 * one plain loop (rendering does no I/O, so a promise per message would only add work).
 */
export function renderWith(
  { compileTemplate, renderTemplate }: Engine,
  organizationId: string,
  version: TemplateVersion,
  variables: Readonly<Record<string, unknown>>,
  base: string,
): RenderResult {
  const { rendered, problems: found } = renderTemplate(compiledFor(compileTemplate, organizationId, version), variables);
  const problems: FieldProblem[] = found.map((problem) => {
    switch (problem.kind) {
      case 'missing':
        return { pointer: `${base}/Variables${problem.pointer}`, detail: 'the template uses this variable, and Variables does not give it' };
      case 'notScalar':
        return { pointer: `${base}/Variables${problem.pointer}`, detail: `the template puts this variable in the message (${problem.pointer ? `{{${pathOf(problem.pointer)}}}` : '{{this}}'}), so it must be a string, number or boolean; it is ${problem.is}` };
      case 'notObject':
        return { pointer: `${base}/Variables${problem.pointer}`, detail: `the template reads names inside this variable ({{${pathOf(problem.pointer)}.…}}), so it must be an object; it is ${problem.is === 'null' ? 'null' : `a ${problem.is}`}` };
      default:
        return { pointer: base, detail: `${problem.field} of template "${version.Name}" version ${version.Version}: ${problem.detail}` };
    }
  });
  if (problems.length > 0) return { problems };
  problems.push(...renderedRules(rendered, version, base));
  if (problems.length > 0) return { problems };
  return {
    problems,
    message: { subject: rendered.Subject ?? '', ...(rendered.TextContent && { text: rendered.TextContent }), ...(rendered.HtmlContent && { html: rendered.HtmlContent }) },
  };
}

/** A pointer below `Variables` as the template writes the path: `/order/a~1b` is `order.a/b`. */
const pathOf = (pointer: string) => pointer.slice(1).split('/').map(unescapePointer).join('.');

/** The rules of a written message, applied to what the template made of it. */
function renderedRules(rendered: Rendered, version: TemplateVersion, base: string): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const fault = (detail: string) => problems.push({ pointer: base, detail: `rendered from "${version.Name}" version ${version.Version}, ${detail}` });
  const subject = rendered.Subject ?? '';
  if (subject.trim() === '') fault('the Subject is empty');
  else if (CONTROL_CHARACTERS.test(subject)) fault('the Subject contains CR, LF or other control characters (from a variable)');
  else if (codePointLength(subject) > MAX_SUBJECT_LENGTH) fault(`the Subject is ${codePointLength(subject)} characters; at most ${MAX_SUBJECT_LENGTH} are allowed`);
  if (!rendered.TextContent && !rendered.HtmlContent) fault('TextContent and HtmlContent are both empty');
  for (const field of TEMPLATE_FIELDS) {
    const text = rendered[field];
    // Variables and templates are checked for lone surrogates before; this keeps SES from ever getting one.
    if (text !== undefined && !isWellFormedText(text)) fault(`${field} is not well-formed Unicode`);
  }
  const bytes = TEMPLATE_FIELDS.reduce((sum, field) => sum + Buffer.byteLength(rendered[field] ?? '', 'utf8'), 0);
  if (bytes > TEMPLATE_LIMITS.renderedBytes) fault(`the message is ${bytes} bytes; at most ${TEMPLATE_LIMITS.renderedBytes} are allowed`);
  return problems;
}
