/**
 * POST /v1.2/email/send: the Lambda entry point. The middy chain and nothing else; the work is
 * in `handleSendRequest`. The local stack imports this same module.
 */
import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { createDynamoDbClient, createSesClient } from '../shared/clients';
import { loadConfig } from '../shared/config';
import { createLogger } from '../shared/logger';
import { SesMailer } from '../shared/mail/ses-mailer';
import type { JsonEvent } from '../shared/middleware/json-body';
import { jsonBody } from '../shared/middleware/json-body';
import { problemResponses } from '../shared/middleware/problem-responses';
import { route } from '../shared/middleware/route';
import { CachedAccessStore } from '../shared/store/cached-access-store';
import { DynamoDbAccessStore } from '../shared/store/dynamodb-access-store';
import { DynamoDbIdempotencyStore } from '../shared/store/dynamodb-idempotency-store';
import type { AccessStore } from '../shared/store/ports';
import type { SendDependencies } from './send-request';
import { handleSendRequest } from './send-request';

export const SEND_PATH = '/v1.2/email/send';
/** Time kept back from the Lambda deadline to write the response. */
const DEADLINE_MARGIN_MS = 1_500;
/** After its end an invocation is certainly gone; a retry may then resume its idempotent request. */
const LOCK_GRACE_MS = 2_000;

export function createHandler(deps: SendDependencies) {
  const { config, logger, now } = deps;
  return middy<JsonEvent, APIGatewayProxyStructuredResultV2, Error, Context>()
    .use(httpHeaderNormalizer())
    .use(problemResponses({ logger, typeBase: config.problemTypeBase }))
    .use(route({ path: SEND_PATH, methods: ['POST'] }))
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
        },
        deps,
      );
    });
}

/** The production wiring: configuration, clients and adapters, built once per instance. */
export function createDependencies(): SendDependencies {
  const config = loadConfig();
  const dynamoDb = createDynamoDbClient(config);
  const store = new DynamoDbAccessStore(dynamoDb, config.tableName);
  const access: AccessStore = config.authCacheSeconds > 0 ? new CachedAccessStore(store, { ttlSeconds: config.authCacheSeconds }) : store;
  return {
    config,
    access,
    idempotency: new DynamoDbIdempotencyStore(dynamoDb, config.tableName),
    mailer: new SesMailer(createSesClient(config), config.sesConfigurationSet),
    logger: createLogger(),
    now: Date.now,
  };
}

export const handler = createHandler(createDependencies());
