/**
 * Every route the API serves, in one place: the CDK stack makes its API Gateway routes from it,
 * the local gateway routes requests by it, and the functions answer 404 and 405 from it. Free of
 * side effects, so any of them can import it without wiring clients.
 *
 * API Gateway sends a request that matches no route to `$default` (the send function), so that
 * function must know every path: another route's path with the wrong method is a 405 there too.
 */
export interface ApiRoute {
  /** A path, with variables of one segment (`/v1.2/templates/{Name}`) or ending in a greedy one (`/settings/{proxy+}`). */
  readonly path: string;
  readonly methods: readonly string[];
}

export const API_ROUTES = {
  send: { path: '/v1.2/email/send', methods: ['POST'] },
  status: { path: '/v1.2/email/status', methods: ['POST'] },
  // Cancelling scheduled messages (functions/cancel).
  cancel: { path: '/v1.2/email/cancel', methods: ['POST'] },
  // Templates (functions/templates): the list, one template, and a rendered preview.
  templates: { path: '/v1.2/templates', methods: ['GET'] },
  template: { path: '/v1.2/templates/{Name}', methods: ['GET', 'PUT', 'DELETE'] },
  templateRender: { path: '/v1.2/templates/{Name}/render', methods: ['POST'] },
  // The settings API (functions/me), behind the JWT authorizer.
  me: { path: '/v1.2/me', methods: ['GET'] },
  meApiKey: { path: '/v1.2/me/api-key', methods: ['GET', 'POST', 'DELETE'] },
  meApiKeyRotate: { path: '/v1.2/me/api-key/rotate', methods: ['POST'] },
  meMessages: { path: '/v1.2/me/messages', methods: ['GET'] },
  meSuppressions: { path: '/v1.2/me/suppressions', methods: ['GET', 'DELETE'] },
  meSchedules: { path: '/v1.2/me/schedules', methods: ['GET', 'DELETE'] },
  meTemplates: { path: '/v1.2/me/templates', methods: ['GET'] },
  meTemplateRender: { path: '/v1.2/me/templates/{Name}/render', methods: ['POST'] },
  // The settings page (functions/settings-page), public static files; HEAD is GET without the body,
  // as link checkers and caches expect of any page (RFC 9110 section 9.3.2).
  settingsPage: { path: '/settings', methods: ['GET', 'HEAD'] },
  settingsAssets: { path: '/settings/{proxy+}', methods: ['GET', 'HEAD'] },
  // The pages a problem document's `type` points at, served by the same function: public, static.
  problems: { path: '/problems', methods: ['GET', 'HEAD'] },
  problemPage: { path: '/problems/{proxy+}', methods: ['GET', 'HEAD'] },
} as const satisfies Record<string, ApiRoute>;

/** The routes the settings API serves, each behind the JWT authorizer. */
export const ME_ROUTES: readonly ApiRoute[] = [API_ROUTES.me, API_ROUTES.meApiKey, API_ROUTES.meApiKeyRotate, API_ROUTES.meMessages, API_ROUTES.meSuppressions, API_ROUTES.meSchedules, API_ROUTES.meTemplates, API_ROUTES.meTemplateRender];
/** The routes the templates function serves, with an API key. */
export const TEMPLATE_ROUTES: readonly ApiRoute[] = [API_ROUTES.templates, API_ROUTES.template, API_ROUTES.templateRender];
/** The routes of the settings page's files and the problem type pages: public. */
export const SETTINGS_PAGE_ROUTES: readonly ApiRoute[] = [API_ROUTES.settingsPage, API_ROUTES.settingsAssets, API_ROUTES.problems, API_ROUTES.problemPage];

export const ALL_ROUTES: readonly ApiRoute[] = Object.values(API_ROUTES);

const GREEDY = /^(.*)\/\{([A-Za-z0-9_]+)\+\}$/;
const VARIABLE = /^\{([A-Za-z0-9_]+)\}$/;

/**
 * Whether `path` is one the route's path pattern covers, as API Gateway matches it: exactly, or,
 * for a greedy variable, one or more segments below its prefix. The parameters it binds, if any.
 */
export function matchPath(pattern: string, path: string): { readonly parameters: Record<string, string> | undefined } | undefined {
  const greedy = GREEDY.exec(pattern);
  if (!greedy && pattern.includes('{')) return matchSegments(pattern, path);
  if (!greedy) return pattern === path ? { parameters: undefined } : undefined;
  const [, prefix, name] = greedy as unknown as [string, string, string];
  if (!path.startsWith(`${prefix}/`) || path.length === prefix.length + 1) return undefined;
  return { parameters: { [name]: path.slice(prefix.length + 1) } };
}

/** A path with one-segment variables: each binds one non-empty segment, as API Gateway's `{Name}` does. */
function matchSegments(pattern: string, path: string): { readonly parameters: Record<string, string> } | undefined {
  const expected = pattern.split('/');
  const actual = path.split('/');
  if (expected.length !== actual.length) return undefined;
  const parameters: Record<string, string> = {};
  for (const [i, segment] of expected.entries()) {
    const given = actual[i] as string;
    const variable = VARIABLE.exec(segment);
    if (variable) {
      if (given === '') return undefined;
      parameters[variable[1] as string] = given;
    } else if (segment !== given) return undefined;
  }
  return { parameters };
}

/** Every method the API serves at `path` (any route's), in route order; empty for a path it does not serve. */
export function methodsServedAt(path: string): string[] {
  return [...new Set(ALL_ROUTES.filter((candidate) => matchPath(candidate.path, path)).flatMap((candidate) => candidate.methods))];
}

/** `POST /v1.2/email/send`, for messages that tell a lost client what is served. */
export function describeRoute(route: ApiRoute): string {
  return `${route.methods.join(', ')} ${route.path}`;
}
