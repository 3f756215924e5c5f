/**
 * Answers for the paths and methods the function does not serve: 404 for other paths, 405 with
 * `Allow` for other methods. The function receives every route, so this holds in AWS and locally.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { MethodNotAllowedProblem, NotFoundProblem } from '../problems';

export interface RouteOptions {
  readonly path: string;
  readonly methods: readonly string[];
}

export function route(options: RouteOptions): middy.MiddlewareObj<APIGatewayProxyEventV2> {
  const routeBefore: middy.MiddlewareFn<APIGatewayProxyEventV2> = async (request) => {
    const { rawPath, requestContext } = request.event;
    if (rawPath !== options.path) throw new NotFoundProblem(rawPath, `${options.methods.join(', ')} ${options.path}`);
    const method = requestContext.http.method.toUpperCase();
    if (!options.methods.includes(method)) throw new MethodNotAllowedProblem(method, options.methods);
  };
  return { before: routeBefore };
}
