/**
 * The templates endpoints' inputs (CONTRACT section 14): the name in the path, the Organization
 * (in the query for GET and DELETE, in the body for PUT and render, either spelling), a version,
 * a template's fields and a render's variables. Every problem is listed with its pointer; a
 * request with any problem stores and renders nothing.
 */
import { CONTROL_CHARACTERS } from '../shared/domain/header-safety';
import { isCanonicalUuid } from '../shared/domain/uuid';
import type { Json } from '../shared/http/body-rules';
import { ProblemList, isObject, own, textField, unknownFields, validateOrganizationId } from '../shared/http/body-rules';
import { ValidationProblem } from '../shared/http/problems';
import type { TemplateContent } from '../shared/templates/template-rules';
import { readVariables, readVersion } from '../shared/templates/template-input';
import { TEMPLATE_LIMITS, TEMPLATE_NAME, templateBytes } from '../shared/templates/template-rules';

const PUT_FIELDS = new Set(['OrganizationId', 'organizationId', 'Subject', 'TextContent', 'HtmlContent']);
const RENDER_FIELDS = new Set(['OrganizationId', 'organizationId', 'Version', 'Variables']);

function fail(problems: ProblemList): never {
  throw new ValidationProblem(problems.items, { total: problems.count });
}

export function validateName(name: string | undefined, problems: ProblemList): string | undefined {
  if (name !== undefined && TEMPLATE_NAME.test(name)) return name;
  problems.add('', `the template name in the path must be 1 to 64 of A-Z, a-z, 0-9, "_" and "-"`);
  return undefined;
}

/**
 * `organizationId` (or `OrganizationId`) from the query string of a GET or DELETE, and `version`
 * where one is read (`versioned`): a DELETE removes every version, so a `version` there is refused
 * rather than ignored, which would delete what the caller meant to keep.
 */
export function validateQuery(query: Readonly<Record<string, string | undefined>> | undefined, name: string | undefined, withName: boolean, versioned = true) {
  const problems = new ProblemList();
  const validName = withName ? validateName(name, problems) : undefined;
  const organizationId = query?.organizationId ?? query?.OrganizationId;
  if (organizationId === undefined) problems.add('/organizationId', 'required in the query string: the UUID of the Organization');
  else if (!isCanonicalUuid(organizationId)) problems.add('/organizationId', 'must be a UUID in 8-4-4-4-12 hex form');
  const version = versioned ? readVersion(query?.version, '/version', problems, true) : undefined;
  if (!versioned && query?.version !== undefined) problems.add('/version', 'not accepted here: DELETE removes every version of the template, and a single version cannot be deleted');
  if (problems.count > 0 || organizationId === undefined) fail(problems);
  return { organizationId: organizationId.toLowerCase(), name: validName as string, version };
}

function validateBody(body: unknown, fields: ReadonlySet<string>, what: string): { body: Json; problems: ProblemList; organizationId: string | undefined } {
  if (!isObject(body)) throw new ValidationProblem([{ pointer: '', detail: `the body must be a JSON object with ${what}` }]);
  const problems = new ProblemList();
  unknownFields(body, fields, '', problems);
  return { body, problems, organizationId: validateOrganizationId(body, problems) };
}

/** PUT's body: the Organization and the template's source, within the size limit; the source itself is checked by the engine. */
export function validatePut(name: string | undefined, input: unknown): { organizationId: string; name: string; content: TemplateContent } {
  const { body, problems, organizationId } = validateBody(input, PUT_FIELDS, 'OrganizationId, Subject and TextContent or HtmlContent');
  const validName = validateName(name, problems);
  const subject = own(body, 'Subject');
  if (subject === undefined || subject === null) problems.add('/Subject', 'required');
  else if (textField(subject, '/Subject', problems) !== undefined) {
    if ((subject as string).trim() === '') problems.add('/Subject', 'must not be empty');
    else if (CONTROL_CHARACTERS.test(subject as string)) problems.add('/Subject', 'must not contain CR, LF or other control characters');
  }
  const bodies: Partial<Record<'TextContent' | 'HtmlContent', string>> = {};
  for (const field of ['TextContent', 'HtmlContent'] as const) {
    const value = own(body, field);
    if (value === undefined || value === null) continue;
    const text = textField(value, `/${field}`, problems);
    if (text) bodies[field] = text;
  }
  if (!bodies.TextContent && !bodies.HtmlContent && problems.count === 0) problems.add('/TextContent', 'TextContent or HtmlContent is required, and not empty');
  const content: TemplateContent = { Subject: subject as string, ...bodies };
  if (problems.count === 0 && templateBytes(content) > TEMPLATE_LIMITS.templateBytes) {
    problems.add('', `the template is ${templateBytes(content)} bytes (Subject, TextContent and HtmlContent in UTF-8); at most ${TEMPLATE_LIMITS.templateBytes} are allowed`);
  }
  if (problems.count > 0 || organizationId === undefined || validName === undefined) fail(problems);
  return { organizationId: organizationId.toLowerCase(), name: validName, content };
}

export function validateRender(name: string | undefined, input: unknown): { organizationId: string; name: string; version: number | undefined; variables: Json } {
  const { body, problems, organizationId } = validateBody(input, RENDER_FIELDS, 'OrganizationId and Variables');
  const validName = validateName(name, problems);
  const version = readVersion(own(body, 'Version'), '/Version', problems);
  const variables = readVariables(own(body, 'Variables'), '/Variables', problems);
  if (problems.count > 0 || organizationId === undefined || validName === undefined || variables === undefined) fail(problems);
  return { organizationId: organizationId.toLowerCase(), name: validName, version, variables };
}
