/**
 * Answers for requests a function does not serve: 405 with `Allow` for a path the API serves
 * with other methods, 404 for any other path. The function that is API Gateway's `$default`
 * receives every unmatched request, so it passes `known` (every route of the API) and answers
 * for all of them; the others only ever receive their own routes.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { ApiRoute } from '../api-routes';
import { describeRoute } from '../api-routes';
import { MethodNotAllowedProblem, NotFoundProblem } from '../problems';

export interface RouteOptions extends ApiRoute {
  /** Other routes of the API, answered with 405 on a wrong method instead of 404. */
  readonly known?: readonly ApiRoute[];
}

export function route(options: RouteOptions): middy.MiddlewareObj<APIGatewayProxyEventV2> {
  const routes = [options, ...(options.known ?? [])];
  const routeBefore: middy.MiddlewareFn<APIGatewayProxyEventV2> = async (request) => {
    const { rawPath, requestContext } = request.event;
    const method = requestContext.http.method.toUpperCase();
    const atPath = routes.filter((candidate) => candidate.path === rawPath);
    if (atPath.length === 0) throw new NotFoundProblem(rawPath, describeRoute(options));
    if (rawPath === options.path && options.methods.includes(method)) return;
    const allow = [...new Set(atPath.flatMap((candidate) => candidate.methods))];
    if (!allow.includes(method)) throw new MethodNotAllowedProblem(method, allow);
    // The right method at a path another function serves: only a misrouted request gets here.
    throw new NotFoundProblem(rawPath, describeRoute(options));
  };
  return { before: routeBefore };
}
