/**
 * Resolves the caller from the Authorization header once the body's size and media type are
 * known to be acceptable and before the body is parsed (CONTRACT section 3): a caller with a
 * missing, malformed, forged, revoked or rotated-out key gets 401 whatever the body holds, and no
 * work is spent on the body. The resolved caller (never the key) is left in `event.caller`.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';

export type AuthenticatedEvent<C> = APIGatewayProxyEventV2 & { caller?: C };

export interface AuthenticateOptions<C> {
  /** The caller for this header, or a 401 problem. */
  readonly resolve: (authorization: string | undefined) => Promise<C>;
}

export function authenticate<C>(options: AuthenticateOptions<C>): middy.MiddlewareObj<AuthenticatedEvent<C>> {
  const authenticateBefore: middy.MiddlewareFn<AuthenticatedEvent<C>> = async ({ event }) => {
    event.caller = await options.resolve(event.headers?.authorization);
  };
  return { before: authenticateBefore };
}
