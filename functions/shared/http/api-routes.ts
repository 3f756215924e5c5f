/**
 * Every route the API serves, in one place: the CDK stack makes its API Gateway routes from it,
 * the local gateway routes requests by it, and the functions answer 404 and 405 from it. Free of
 * side effects, so any of them can import it without wiring clients.
 *
 * API Gateway sends a request that matches no route to `$default` (the send function), so that
 * function must know every path: another route's path with the wrong method is a 405 there too.
 */
export interface ApiRoute {
  readonly path: string;
  readonly methods: readonly string[];
}

export const API_ROUTES = {
  send: { path: '/v1.2/email/send', methods: ['POST'] },
  status: { path: '/v1.2/email/status', methods: ['POST'] },
} as const satisfies Record<string, ApiRoute>;

export const ALL_ROUTES: readonly ApiRoute[] = Object.values(API_ROUTES);

/** `POST /v1.2/email/send`, for messages that tell a lost client what is served. */
export function describeRoute(route: ApiRoute): string {
  return `${route.methods.join(', ')} ${route.path}`;
}
