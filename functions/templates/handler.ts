/**
 * The templates endpoints (`/v1.2/templates…`): the API-key chain every key endpoint shares, and
 * `handleTemplateRequest`. Lambda runs it through `index.ts`; the local stack and the tests run
 * this same chain.
 */
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { Caller } from '../shared/auth/caller';
import { API_ROUTES, TEMPLATE_ROUTES, matchPath } from '../shared/http/api-routes';
import type { ApiKeyEvent } from '../shared/http/api-key-chain';
import { apiKeyChain } from '../shared/http/api-key-chain';
import type { Config } from '../shared/runtime/config';
import type { Tracing } from '../shared/runtime/observability';
import type { TemplateDependencies } from './template-request';
import { handleTemplateRequest } from './template-request';

export const TEMPLATES_PATH = API_ROUTES.templates.path;

export interface TemplateHandlerDependencies extends TemplateDependencies {
  readonly config: Config;
  readonly metrics: Metrics;
}

function routeOf(path: string): { route: 'list' | 'item' | 'render'; name: string | undefined } {
  const render = matchPath(API_ROUTES.templateRender.path, path)?.parameters;
  if (render) return { route: 'render', name: render.Name };
  const item = matchPath(API_ROUTES.template.path, path)?.parameters;
  return item ? { route: 'item', name: item.Name } : { route: 'list', name: undefined };
}

export function createTemplateHandler(deps: TemplateHandlerDependencies, tracing?: Tracing) {
  // A template is at most 512 KB of source; JSON escaping can double that, and no more is read.
  return apiKeyChain({ ...deps, tracing, problemTypeBase: deps.config.problemTypeBase, maxBodyBytes: deps.config.maxBodyBytes, scope: 'templates', route: { serves: TEMPLATE_ROUTES }, bodyless: ['GET', 'DELETE'] }).handler(
    (event: ApiKeyEvent) =>
      handleTemplateRequest(
        {
          caller: event.caller as Caller,
          method: event.requestContext.http.method.toUpperCase(),
          ...routeOf(event.rawPath),
          query: event.queryStringParameters,
          body: event.body,
          requestId: event.requestContext.requestId,
        },
        deps,
      ),
  );
}
