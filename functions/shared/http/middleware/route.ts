/**
 * Answers for requests a function does not serve: 405 with `Allow` for a path the API serves
 * with other methods, 404 for any other path. The function that is API Gateway's `$default`
 * receives every unmatched request, so it passes `known` (every route of the API) and answers
 * for all of them; the others only ever receive their own routes.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { ApiRoute } from '../api-routes';
import { describeRoute, matchPath } from '../api-routes';
import { MethodNotAllowedProblem, NotFoundProblem } from '../problems';

export interface RouteOptions {
  /** The routes this function serves. */
  readonly serves: readonly ApiRoute[];
  /** Other routes of the API, answered with 405 on a wrong method instead of 404. */
  readonly known?: readonly ApiRoute[];
}

/** The first segments of a path (`/v1.2/templates`): routes under the same ones are what a typo near them meant. */
const AREA_SEGMENTS = 3;
const areaOf = (path: string) => path.split('/').slice(0, AREA_SEGMENTS).join('/');

export function route(options: RouteOptions): middy.MiddlewareObj<APIGatewayProxyEventV2> {
  const { serves, known = [] } = options;
  const own = serves.map(describeRoute).join('; ');
  // A 404 names what is served near the path asked for (`/v1.2/templates/` names the template
  // routes), else this function's own routes.
  const served = (path: string) => {
    const near = new Set([...serves, ...known].filter((candidate) => areaOf(candidate.path) === areaOf(path)).map(describeRoute));
    return near.size > 0 ? [...near].join('; ') : own;
  };
  const routeBefore: middy.MiddlewareFn<APIGatewayProxyEventV2> = async (request) => {
    const { rawPath, requestContext } = request.event;
    const method = requestContext.http.method.toUpperCase();
    const at = (routes: readonly ApiRoute[]) => routes.filter((candidate) => matchPath(candidate.path, rawPath));
    if (at(serves).some((candidate) => candidate.methods.includes(method))) return;
    const atPath = [...at(serves), ...at(known)];
    if (atPath.length === 0) throw new NotFoundProblem(rawPath, served(rawPath));
    const allow = [...new Set(atPath.flatMap((candidate) => candidate.methods))];
    if (!allow.includes(method)) throw new MethodNotAllowedProblem(method, allow);
    // The right method at a path another function serves: only a misrouted request gets here.
    throw new NotFoundProblem(rawPath, served(rawPath));
  };
  return { before: routeBefore };
}
