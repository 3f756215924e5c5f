/**
 * Refuses a request without a well-formed Bearer key before its body is even read, so a caller
 * without credentials always learns that first (401), whatever else is wrong with the request.
 * The key is checked again, and looked up, by the send logic; it is never kept on the event.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { readBearerToken } from '../bearer-token';

export function requireBearer(): middy.MiddlewareObj<APIGatewayProxyEventV2> {
  const requireBearerBefore: middy.MiddlewareFn<APIGatewayProxyEventV2> = async (request) => {
    readBearerToken(request.event.headers?.authorization);
  };
  return { before: requireBearerBefore };
}
