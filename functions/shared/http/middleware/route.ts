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

export function route(options: RouteOptions): middy.MiddlewareObj<APIGatewayProxyEventV2> {
  const { serves, known = [] } = options;
  const served = serves.map(describeRoute).join('; ');
  const routeBefore: middy.MiddlewareFn<APIGatewayProxyEventV2> = async (request) => {
    const { rawPath, requestContext } = request.event;
    const method = requestContext.http.method.toUpperCase();
    const at = (routes: readonly ApiRoute[]) => routes.filter((candidate) => matchPath(candidate.path, rawPath));
    if (at(serves).some((candidate) => candidate.methods.includes(method))) return;
    const atPath = [...at(serves), ...at(known)];
    if (atPath.length === 0) throw new NotFoundProblem(rawPath, served);
    const allow = [...new Set(atPath.flatMap((candidate) => candidate.methods))];
    if (!allow.includes(method)) throw new MethodNotAllowedProblem(method, allow);
    // The right method at a path another function serves: only a misrouted request gets here.
    throw new NotFoundProblem(rawPath, served);
  };
  return { before: routeBefore };
}
