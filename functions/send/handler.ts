/**
 * POST /v1.2/email/send: the middy chain and nothing else; the work is in `handleSendRequest`.
 * Lambda runs it through `index.ts`; the local stack and the tests run this same chain.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { Tracing } from '../shared/runtime/observability';
import { readBearerToken } from '../shared/http/bearer-token';
import type { AuthenticatedEvent } from '../shared/http/middleware/authenticate';
import { authenticate as authenticateCaller } from '../shared/http/middleware/authenticate';
import type { JsonEvent } from '../shared/http/middleware/json-body';
import { bodyLimits, jsonBody } from '../shared/http/middleware/json-body';
import { requireBearer } from '../shared/http/middleware/require-bearer';
import { problemResponses } from '../shared/http/middleware/problem-responses';
import { requestLog } from '../shared/http/middleware/request-log';
import { route } from '../shared/http/middleware/route';
import type { Caller } from './authorisation';
import { authenticate } from './authorisation';
import type { SendDependencies } from './send-request';
import { handleSendRequest } from './send-request';
import { ALL_ROUTES, API_ROUTES } from '../shared/http/api-routes';

export { SEND_PATH } from './route';

/** Time kept back from the Lambda deadline to write the response. */
const DEADLINE_MARGIN_MS = 1_500;
/** After its end an invocation is certainly gone; a retry may then resume its idempotent request. */
const LOCK_GRACE_MS = 2_000;

export function createHandler(deps: SendDependencies, tracing?: Tracing) {
  const { config, logger, metrics, now } = deps;
  const chain = middy<JsonEvent & AuthenticatedEvent<Caller>, APIGatewayProxyStructuredResultV2, Error, Context>();
  if (tracing) chain.use(tracing.middleware);
  return chain
    // logEvent off whatever POWERTOOLS_LOGGER_LOG_EVENT says: the event holds the API key.
    .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }))
    .use(logMetrics(metrics, { captureColdStartMetric: true }))
    // Logged after the problem document is built (middy runs onError handlers in reverse).
    .use(requestLog({ logger, metrics, now }))
    .use(httpHeaderNormalizer())
    .use(problemResponses({ logger, typeBase: config.problemTypeBase }))
    .use(route({ serves: [API_ROUTES.send], known: ALL_ROUTES }))
    // The order of checks (README, "Order of checks"): path and method, a well-formed key, the
    // body's size and media type, the key itself, then the body.
    .use(requireBearer())
    .use(bodyLimits({ maxBytes: config.maxBodyBytes }))
    .use(authenticateCaller({ resolve: (authorization) => authenticate(readBearerToken(authorization), deps.access) }))
    .use(jsonBody())
    .handler(async (event, context) => {
      const remaining = typeof context?.getRemainingTimeInMillis === 'function' ? context.getRemainingTimeInMillis() : undefined;
      const end = now() + (remaining ?? config.sendDeadlineMs + DEADLINE_MARGIN_MS);
      return handleSendRequest(
        {
          caller: event.caller as Caller,
          idempotencyKey: event.headers?.['idempotency-key'],
          body: event.jsonBody,
          requestId: event.requestContext.requestId,
          deadline: end - DEADLINE_MARGIN_MS,
          lockUntil: end + LOCK_GRACE_MS,
        },
        deps,
      );
    });
}
