/**
 * Messages written from a stored template (CONTRACT section 14): `Template: { Name, Version?,
 * Variables }` in place of `Subject`, `TextContent` and `HtmlContent`. The shape is checked with
 * the rest of the body (`readTemplateUse`); once the caller is known to be a member, each template
 * version is read (once per distinct name and version in the request, and kept per instance:
 * versions never change), every message rendered and held to a written message's rules
 * (`renderTemplates`). Any problem in any message fails the whole request with every pointer, and
 * nothing is sent. The version is fixed here, at acceptance: a scheduled message is stored rendered.
 */
import { LRUCache } from 'lru-cache';
import type { Json, ProblemList } from '../shared/http/body-rules';
import { isObject, own, unknownFields } from '../shared/http/body-rules';
import { ValidationProblem } from '../shared/http/problems';
import type { FieldProblem } from '../shared/http/problems';
import { loadEngine, renderWith } from '../shared/templates/rendering';
import type { TemplateReference, TemplateUse, TemplateVersion } from '../shared/templates/template-rules';
import { TEMPLATE_NAME } from '../shared/templates/template-rules';
import type { TemplateReader } from '../shared/templates/template-store';
import { readVariables, readVersion } from '../shared/templates/template-input';

export const TEMPLATE_FIELD = 'Template';
const USE_FIELDS = new Set(['Name', 'Version', 'Variables']);
/** The fields a template gives: a message names a template or writes them, not both. */
export const WRITTEN_FIELDS = ['Subject', 'TextContent', 'HtmlContent'] as const;


export function readTemplateUse(value: unknown, pointer: string, problems: ProblemList): TemplateUse | undefined {
  if (!isObject(value)) {
    problems.add(pointer, 'must be an object: { "Name", "Version"?, "Variables" }');
    return undefined;
  }
  const before = problems.count;
  unknownFields(value, USE_FIELDS, pointer, problems);
  const name = own(value, 'Name');
  if (typeof name !== 'string' || !TEMPLATE_NAME.test(name)) problems.add(`${pointer}/Name`, 'required: a template name, 1 to 64 of A-Z, a-z, 0-9, "_" and "-"');
  const version = readVersion(own(value, 'Version'), `${pointer}/Version`, problems);
  const variables = readVariables(own(value, 'Variables'), `${pointer}/Variables`, problems);
  return problems.count > before || variables === undefined ? undefined : { name: name as string, version, variables };
}

/** Explicit versions, per instance: they never change. A deleted template's stays sendable here for at most this long. */
const versions = new LRUCache<string, TemplateVersion>({ max: 200, ttl: 60_000 });

async function readOnce(reader: TemplateReader, organizationId: string, name: string, version: number | undefined): Promise<TemplateVersion | undefined> {
  const key = `${organizationId}\n${name}\n${version}`;
  const cached = version === undefined ? undefined : versions.get(key);
  if (cached) return cached;
  const found = await reader.read(organizationId, name, version);
  if (found) versions.set(`${organizationId}\n${name}\n${found.Version}`, found);
  return found;
}

interface Templated {
  readonly index: number;
  readonly templateUse?: TemplateUse;
  readonly subject: string;
  readonly text?: string;
  readonly html?: string;
  readonly template?: TemplateReference;
}

/**
 * Each templated message with its template rendered in (and `template` naming the version used);
 * the others as they are. Throws a `ValidationProblem` listing every problem of every message.
 */
export async function renderTemplates<M extends Templated>(messages: readonly M[], organizationId: string, reader: TemplateReader): Promise<readonly M[]> {
  if (!messages.some((message) => message.templateUse)) return messages;
  const wanted = new Map<string, Promise<TemplateVersion | undefined>>();
  for (const { templateUse: use } of messages) {
    const key = `${use?.name}\n${use?.version}`;
    if (use && !wanted.has(key)) wanted.set(key, readOnce(reader, organizationId, use.name, use.version));
  }
  // The versions are read (at most one GetItem each) before the engine renders every message in one synchronous loop.
  const [engine, found] = await Promise.all([loadEngine(), Promise.all([...wanted].map(async ([key, read]) => [key, await read] as const))]);
  const versionOf = new Map(found);
  const problems: FieldProblem[] = [];
  const rendered = messages.map((message) => {
    const use = message.templateUse;
    if (!use) return message;
    const base = `/Messages/${message.index}/${TEMPLATE_FIELD}`;
    const version = versionOf.get(`${use.name}\n${use.version}`);
    if (!version) {
      problems.push(use.version === undefined
        ? { pointer: `${base}/Name`, detail: `the Organization has no template named "${use.name}"` }
        : { pointer: `${base}/Version`, detail: `the template "${use.name}" has no version ${use.version}` });
      return message;
    }
    const result = renderWith(engine, organizationId, version, use.variables, base);
    problems.push(...result.problems);
    const { templateUse: _, ...rest } = message;
    return { ...rest, ...(result.message ?? { subject: '' }), template: { name: version.Name, version: version.Version } } as M;
  });
  if (problems.length > 0) {
    problems.sort((a, b) => a.pointer.localeCompare(b.pointer, 'en', { numeric: true }));
    throw new ValidationProblem(problems);
  }
  return rendered;
}
