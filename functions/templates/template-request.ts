/**
 * The templates endpoints (CONTRACT section 14), one plain function per route; `handler.ts` is
 * their HTTP face. Each checks its input, then the caller's membership (the send endpoint's rule:
 * unknown Organization and not a member are the same 403), then acts. A template is checked by
 * the engine before it is stored: nothing that would not compile, or that steps outside the safe
 * subset, is ever saved.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { Caller } from '../shared/auth/caller';
import { authoriseOrganization } from '../shared/auth/caller';
import { ProblemList } from '../shared/http/body-rules';
import { TemplateNotFoundProblem, ValidationProblem } from '../shared/http/problems';
import type { AccessStore } from '../shared/store/ports';
import { previewTemplate } from '../shared/templates/preview';
import { loadEngine } from '../shared/templates/rendering';
import type { TemplateStore } from '../shared/templates/template-store';
import { TemplateLimitError } from '../shared/templates/template-store';
import { validatePut, validateQuery, validateRender } from './validation';

export interface TemplateDependencies {
  readonly access: AccessStore;
  readonly templates: TemplateStore;
  readonly logger: Logger;
  readonly now: () => number;
}

export interface TemplateInput {
  readonly caller: Caller;
  readonly method: string;
  /** `list`, `item` or `render`, by the route matched. */
  readonly route: 'list' | 'item' | 'render';
  readonly name: string | undefined;
  readonly query: Readonly<Record<string, string | undefined>> | undefined;
  readonly body: unknown;
  readonly requestId: string;
}

function json(statusCode: number, body: unknown, requestId: string): APIGatewayProxyStructuredResultV2 {
  return { statusCode, headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', 'X-Request-Id': requestId }, body: JSON.stringify(body) };
}

export async function handleTemplateRequest(input: TemplateInput, deps: TemplateDependencies): Promise<APIGatewayProxyStructuredResultV2> {
  const { caller, requestId } = input;
  deps.logger.appendKeys({ userId: caller.userId });
  const member = async (organizationId: string) => {
    await authoriseOrganization(caller, organizationId, deps.access);
    deps.logger.appendKeys({ organizationId });
  };

  if (input.route === 'list') {
    const { organizationId } = validateQuery(input.query, undefined, false);
    await member(organizationId);
    const templates = await deps.templates.list(organizationId);
    return json(200, { Templates: templates }, requestId);
  }

  if (input.route === 'render') {
    const request = validateRender(input.name, input.body);
    await member(request.organizationId);
    return json(200, await previewTemplate(deps.templates, request), requestId);
  }

  if (input.method === 'PUT') {
    const request = validatePut(input.name, input.body);
    const { checkTemplate } = await loadEngine();
    const problems = new ProblemList();
    for (const problem of checkTemplate(request.content)) {
      problems.add(`/${problem.field}`, problem.line === undefined ? problem.detail : `line ${problem.line}: ${problem.detail}`);
    }
    if (problems.count > 0) throw new ValidationProblem(problems.items, { total: problems.count });
    await member(request.organizationId);
    let saved;
    try {
      saved = await deps.templates.save(request.organizationId, request.name, request.content, new Date(deps.now()));
    } catch (error) {
      if (error instanceof TemplateLimitError) throw new ValidationProblem([{ pointer: '', detail: error.message }], { cause: error });
      throw error;
    }
    return json(201, { Name: saved.Name, Version: saved.Version, CreatedAt: saved.CreatedAt }, requestId);
  }

  const { organizationId, name, version } = validateQuery(input.query, input.name, true, input.method !== 'DELETE');
  await member(organizationId);
  if (input.method === 'DELETE') {
    if (!(await deps.templates.remove(organizationId, name))) throw new TemplateNotFoundProblem(name);
    return { statusCode: 204, headers: { 'Cache-Control': 'no-store', 'X-Request-Id': requestId } };
  }
  const found = await deps.templates.read(organizationId, name, version);
  if (!found) throw new TemplateNotFoundProblem(name, version);
  return json(200, found, requestId);
}
