/**
 * The middy chain of every endpoint called with an API key (send, status), written once so they
 * cannot drift apart: logging and metrics, header normalisation, problem documents, then the
 * order of checks (docs/decisions.md, "Order of checks"): path and method, a well-formed key, the body's
 * size and media type, the key itself and its scope, then the body. Each endpoint adds its handler.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { Caller } from '../auth/caller';
import { authenticate, requireScope } from '../auth/caller';
import type { KeyScope } from '../domain/key-policy';
import type { Tracing } from '../runtime/observability';
import type { AccessStore } from '../store/ports';
import { readBearerToken } from './bearer-token';
import type { AuthenticatedEvent } from './middleware/authenticate';
import { authenticate as authenticateCaller } from './middleware/authenticate';
import type { JsonEvent } from './middleware/json-body';
import { bodyLimits, jsonBody } from './middleware/json-body';
import { problemResponses } from './middleware/problem-responses';
import { requestLog } from './middleware/request-log';
import { requireBearer } from './middleware/require-bearer';
import type { RouteOptions } from './middleware/route';
import { route } from './middleware/route';

/** The event the handler gets: its body parsed (middleware/json-body.ts), its caller resolved. */
export type ApiKeyEvent = JsonEvent & Pick<AuthenticatedEvent<Caller>, 'caller'>;

export interface ApiKeyChainOptions {
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly now: () => number;
  readonly access: AccessStore;
  readonly problemTypeBase: string;
  readonly maxBodyBytes: number;
  readonly route: RouteOptions;
  /** The scope a key needs for this endpoint (docs/keys.md). */
  readonly scope: KeyScope;
  readonly tracing?: Tracing | undefined;
  /** Methods whose requests carry no body (GET, DELETE): the body steps are skipped for them. */
  readonly bodyless?: readonly string[];
}

/** The middlewares, their `before` skipped for requests whose method carries no body. */
function forBodies<E extends { requestContext: { http: { method: string } } }>(bodyless: readonly string[], middlewares: middy.MiddlewareObj<E>[]): middy.MiddlewareObj<E>[] {
  if (bodyless.length === 0) return middlewares;
  return middlewares.map((middleware) => {
    const { before } = middleware;
    return before ? { ...middleware, before: async (request) => (bodyless.includes(request.event.requestContext.http.method.toUpperCase()) ? undefined : before(request)) } : middleware;
  });
}

export function apiKeyChain(options: ApiKeyChainOptions) {
  const { logger, metrics, now } = options;
  const chain = middy<ApiKeyEvent, APIGatewayProxyStructuredResultV2, Error, Context>();
  if (options.tracing) chain.use(options.tracing.middleware);
  return chain
    // logEvent off whatever POWERTOOLS_LOGGER_LOG_EVENT says: the event holds the API key.
    .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }))
    .use(logMetrics(metrics, { captureColdStartMetric: true }))
    // Logged after the problem document is built (middy runs onError handlers in reverse).
    .use(requestLog({ logger, metrics, now }))
    .use(httpHeaderNormalizer())
    .use(problemResponses({ logger, typeBase: options.problemTypeBase }))
    .use(route(options.route))
    .use(requireBearer())
    .use(forBodies(options.bodyless ?? [], [bodyLimits({ maxBytes: options.maxBodyBytes })]))
    .use(
      authenticateCaller({
        resolve: async (authorization) => {
          const caller = await authenticate(readBearerToken(authorization), options.access, now());
          requireScope(caller, options.scope);
          return caller;
        },
      }),
    )
    .use(forBodies(options.bodyless ?? [], jsonBody()));
}
