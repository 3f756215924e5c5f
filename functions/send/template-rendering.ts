/**
 * Rendering the templated messages of a send request (templated.ts says what and why): imported
 * with the first templated message, so a send without one reads none of it, nor the engine.
 */
import { ValidationProblem } from '../shared/http/problems';
import type { FieldProblem } from '../shared/http/problems';
import { loadEngine, renderWith } from '../shared/templates/rendering';
import type { TemplateReference, TemplateUse, TemplateVersion } from '../shared/templates/template-rules';
import { TEMPLATE_FIELD } from '../shared/templates/template-rules';
import type { TemplateReader } from '../shared/templates/template-store';

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
    // Read for every request, not kept: a template deleted (or deleted and made again, numbered from 1) is refused at once.
    if (use && !wanted.has(key)) wanted.set(key, reader.read(organizationId, use.name, use.version));
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
