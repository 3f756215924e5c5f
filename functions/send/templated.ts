/**
 * Messages written from a stored template (CONTRACT section 14): `Template: { Name, Version?,
 * Variables }` in place of `Subject`, `TextContent` and `HtmlContent`. The shape is checked with
 * the rest of the body (`readTemplateUse`); once the caller is known to be a member, each template
 * version is read (once per distinct name and version in the request, at every request, so a
 * deleted template is refused at once), every message rendered and held to a written message's rules
 * (`renderTemplates`). Any problem in any message fails the whole request with every pointer, and
 * nothing is sent. The version is fixed here, at acceptance: a scheduled message is stored rendered.
 * The rendering (template-rendering.ts, and the engine behind it) is imported with the first
 * templated message: a send without one reads none of it.
 */
import type { ProblemList } from '../shared/http/body-rules';
import { isObject, own, unknownFields } from '../shared/http/body-rules';
import type { TemplateUse } from '../shared/templates/template-rules';
import { TEMPLATE_NAME } from '../shared/templates/template-rules';
import type { TemplateReader } from '../shared/templates/template-store';
import { readVariables, readVersion } from '../shared/templates/template-input';
import type { Templated } from './template-rendering';

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

/**
 * Each templated message with its template rendered in (and `template` naming the version used);
 * the others as they are. Throws a `ValidationProblem` listing every problem of every message.
 */
export async function renderTemplates<M extends Templated>(messages: readonly M[], organizationId: string, reader: TemplateReader): Promise<readonly M[]> {
  if (!messages.some((message) => message.templateUse)) return messages;
  return (await import('./template-rendering')).renderTemplated(messages, organizationId, reader);
}
