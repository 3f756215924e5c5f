/**
 * Rendering the templated messages of a send request (templated.ts says what and why): imported
 * with the first templated message, so a send without one reads none of it, nor the engine.
 */
import { ValidationProblem } from '../shared/http/problems';
import type { FieldProblem } from '../shared/http/problems';
import { ExpiringCache } from '../shared/runtime/expiring-cache';
import { loadEngine, renderWith } from '../shared/templates/rendering';
import type { TemplateReference, TemplateUse, TemplateVersion } from '../shared/templates/template-rules';
import { TEMPLATE_FIELD } from '../shared/templates/template-rules';
import type { TemplateReader } from '../shared/templates/template-store';

/** Explicit versions, per instance: they never change. A deleted template's stays sendable here for at most this long. */
const versions = new ExpiringCache<string, TemplateVersion>({ max: 200, ttlMs: 60_000 });

async function readOnce(reader: TemplateReader, organizationId: string, name: string, version: number | undefined): Promise<TemplateVersion | undefined> {
  const key = `${organizationId}\n${name}\n${version}`;
  const cached = version === undefined ? undefined : versions.get(key);
  if (cached) return cached;
  const found = await reader.read(organizationId, name, version);
  if (found) versions.set(`${organizationId}\n${name}\n${found.Version}`, found);
  return found;
}

/** A message as validation leaves it: written, or naming a template to render. */
export interface Templated {
  readonly index: number;
  readonly templateUse?: TemplateUse;
  readonly subject: string;
  readonly text?: string;
  readonly html?: string;
  readonly template?: TemplateReference;
}

/** `renderTemplates` (templated.ts) for a request with at least one templated message. */
export async function renderTemplated<M extends Templated>(messages: readonly M[], organizationId: string, reader: TemplateReader): Promise<readonly M[]> {
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
