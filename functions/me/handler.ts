/**
 * The settings API (`/v1.2/me…`): the middy chain and a dispatch to the plain functions of
 * `me.ts`. In AWS, API Gateway's JWT authorizer has checked the access token before this runs;
 * locally, the local gateway has, the same way. Lambda runs it through `index.ts`.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEventV2WithJWTAuthorizer, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { ME_ROUTES } from '../shared/http/api-routes';
import { problemResponses } from '../shared/http/middleware/problem-responses';
import { requestLog } from '../shared/http/middleware/request-log';
import { route } from '../shared/http/middleware/route';
import type { Tracing } from '../shared/runtime/observability';
import type { DynamoDbKeyStore } from '../shared/store/dynamodb-key-store';
import type { IdentityResolver } from './identity';
import type { DynamoDbReputationStore } from '../shared/store/dynamodb-reputation-store';
import { describe, generateKey, revokeKey, rotateKey, userOf } from './me';

export interface MeDependencies {
  readonly keys: DynamoDbKeyStore;
  /** The member Organizations' reputation counters (CONTRACT section 11 item 3). */
  readonly reputations: Pick<DynamoDbReputationStore, 'readMany'>;
  readonly identity: IdentityResolver;
  readonly problemTypeBase: string;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly now: () => number;
}

type Event = APIGatewayProxyEventV2WithJWTAuthorizer;

function json(status: number, body: unknown, requestId: string): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode: status,
    // The answer to generate and rotate holds the plain key: no cache anywhere may keep it.
    headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', 'X-Request-Id': requestId },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  };
}

export function createMeHandler(deps: MeDependencies, tracing?: Tracing) {
  const { logger, metrics, now, keys } = deps;
  const chain = middy<Event, APIGatewayProxyStructuredResultV2, Error, Context>();
  if (tracing) chain.use(tracing.middleware);
  return chain
    // logEvent off whatever POWERTOOLS_LOGGER_LOG_EVENT says: the event holds the access token.
    .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }))
    .use(logMetrics(metrics))
    .use(requestLog({ logger, metrics, now }))
    .use(httpHeaderNormalizer())
    .use(problemResponses({ logger, typeBase: deps.problemTypeBase }))
    .use(route({ serves: ME_ROUTES }))
    .handler(async (event) => {
      const requestId = event.requestContext.requestId;
      const identity = await deps.identity.resolve(event.requestContext.authorizer?.jwt?.claims, event.headers?.authorization);
      const user = await userOf(identity, keys);
      logger.appendKeys({ userId: user.id });
      const operation = `${event.requestContext.http.method.toUpperCase()} ${event.rawPath}`;
      switch (operation) {
        case 'GET /v1.2/me':
          return json(200, await describe(user, keys, deps.reputations, now()), requestId);
        case 'POST /v1.2/me/api-key':
          return json(201, await generateKey(user, keys), requestId);
        case 'POST /v1.2/me/api-key/rotate':
          return json(200, await rotateKey(user, keys), requestId);
        default:
          // DELETE /v1.2/me/api-key: the route middleware lets nothing else through.
          await revokeKey(user, keys);
          return json(204, undefined, requestId);
      }
    });
}
