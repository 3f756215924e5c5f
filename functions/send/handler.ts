/**
 * POST /v1.2/email/send: the Lambda entry point. The middy chain and nothing else; the work is
 * in `handleSendRequest`. The local stack imports this same module.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { createDynamoDbClient, createSesClient } from '../shared/runtime/clients';
import { loadConfig } from '../shared/runtime/config';
import type { Tracing } from '../shared/runtime/observability';
import { createLogger, createMetrics, createTracing } from '../shared/runtime/observability';
import { SesMailer } from '../shared/mail/ses-mailer';
import type { JsonEvent } from '../shared/http/middleware/json-body';
import { bearerToken } from '../shared/http/middleware/require-bearer';
import { jsonBody } from '../shared/http/middleware/json-body';
import { problemResponses } from '../shared/http/middleware/problem-responses';
import type { SummarisedEvent } from '../shared/http/middleware/request-log';
import { requestLog } from '../shared/http/middleware/request-log';
import { route } from '../shared/http/middleware/route';
import { CachedAccessStore } from '../shared/store/cached-access-store';
import { DynamoDbAccessStore } from '../shared/store/dynamodb-access-store';
import { DynamoDbIdempotencyStore } from '../shared/store/dynamodb-idempotency-store';
import type { AccessStore } from '../shared/store/ports';
import type { SendDependencies } from './send-request';
import { handleSendRequest } from './send-request';
import { SEND_METHODS, SEND_PATH } from './route';

export { SEND_PATH } from './route';

/** Time kept back from the Lambda deadline to write the response. */
const DEADLINE_MARGIN_MS = 1_500;
/** After its end an invocation is certainly gone; a retry may then resume its idempotent request. */
const LOCK_GRACE_MS = 2_000;

export function createHandler(deps: SendDependencies, tracing?: Tracing) {
  const { config, logger, metrics, now } = deps;
  const chain = middy<JsonEvent & SummarisedEvent, APIGatewayProxyStructuredResultV2, Error, Context>();
  if (tracing) chain.use(tracing.middleware);
  return chain
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics, { captureColdStartMetric: true }))
    // Logged after the problem document is built (middy runs onError handlers in reverse).
    .use(requestLog({ logger, metrics, now }))
    .use(httpHeaderNormalizer())
    .use(problemResponses({ logger, typeBase: config.problemTypeBase }))
    .use(route({ path: SEND_PATH, methods: SEND_METHODS }))
    .use(bearerToken())
    .use(jsonBody({ maxBytes: config.maxBodyBytes }))
    .handler(async (event, context) => {
      const remaining = typeof context?.getRemainingTimeInMillis === 'function' ? context.getRemainingTimeInMillis() : undefined;
      const end = now() + (remaining ?? config.sendDeadlineMs + DEADLINE_MARGIN_MS);
      return handleSendRequest(
        {
          authorization: event.headers?.authorization,
          idempotencyKey: event.headers?.['idempotency-key'],
          body: event.jsonBody,
          requestId: event.requestContext.requestId,
          deadline: end - DEADLINE_MARGIN_MS,
          lockUntil: end + LOCK_GRACE_MS,
          summary: event.summary,
        },
        deps,
      );
    });
}

/** The production wiring: configuration, clients and adapters, built once per instance. */
export function createDependencies(tracing?: Tracing): SendDependencies {
  const config = loadConfig();
  const dynamoDb = createDynamoDbClient(config, tracing?.instrument);
  const store = new DynamoDbAccessStore(dynamoDb, config.tableName);
  const access: AccessStore = config.authCacheSeconds > 0 ? new CachedAccessStore(store, { ttlSeconds: config.authCacheSeconds }) : store;
  return {
    config,
    access,
    idempotency: new DynamoDbIdempotencyStore(dynamoDb, config.tableName),
    mailer: new SesMailer(createSesClient(config, tracing?.instrument), config.sesConfigurationSet),
    logger: createLogger(),
    metrics: createMetrics(),
    now: Date.now,
  };
}

const tracing = await createTracing();
export const handler = createHandler(createDependencies(tracing), tracing);
