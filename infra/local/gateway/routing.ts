/**
 * Which function a request goes to, as an HTTP API picks it: a route whose method and path match
 * exactly wins over one with a greedy path variable (`/settings/{proxy+}`); no match goes to
 * `$default`. A route may carry a JWT authorizer, checked before its function is called.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, Context } from 'aws-lambda';
import { matchPath } from '../../../functions/shared/http/api-routes';

export type LambdaHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyResultV2 | undefined | void>;

/** What a JWT authorizer hands the function, as `requestContext.authorizer.jwt`. */
export interface JwtAuthorization {
  readonly claims: Readonly<Record<string, string | number | boolean | string[]>>;
  readonly scopes: readonly string[] | null;
}

/** Checks the Authorization header's JWT; undefined when the request must be refused (401). */
export type JwtAuthorizer = (authorization: string | undefined) => Promise<JwtAuthorization | undefined>;

export interface GatewayRoute {
  readonly method: string;
  /** A path, optionally ending in a greedy variable: `/settings/{proxy+}`. */
  readonly path: string;
  readonly handler: LambdaHandler;
  /** The function's name in the Lambda context it gets. */
  readonly functionName: string;
  readonly authorizer?: JwtAuthorizer;
}

export interface RouteMatch {
  readonly route: GatewayRoute;
  readonly routeKey: string;
  readonly pathParameters: Record<string, string> | undefined;
}

export function matchRoute(routes: readonly GatewayRoute[], method: string, path: string): RouteMatch | undefined {
  let best: { readonly match: RouteMatch; readonly rank: number } | undefined;
  for (const route of routes) {
    if (route.method !== method && route.method !== 'ANY') continue;
    const matched = matchPath(route.path, path);
    if (!matched) continue;
    // A full path outranks a greedy variable; then a named method outranks ANY.
    const rank = (matched.parameters === undefined ? 2 : 0) + (route.method === method ? 1 : 0);
    if (best && best.rank >= rank) continue;
    best = { match: { route, routeKey: `${route.method} ${route.path}`, pathParameters: matched.parameters }, rank };
  }
  return best?.match;
}
