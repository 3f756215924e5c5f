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
import { API_ROUTES, ME_ROUTES, matchPath } from '../shared/http/api-routes';
import { requireJsonMediaIfBody } from '../shared/http/media-type';
import { problemResponses } from '../shared/http/middleware/problem-responses';
import { requestLog } from '../shared/http/middleware/request-log';
import { route } from '../shared/http/middleware/route';
import type { Tracing } from '../shared/runtime/observability';
import type { DynamoDbActivityStore } from '../shared/store/dynamodb-activity-store';
import type { DynamoDbKeyStore } from '../shared/store/dynamodb-key-store';
import type { DynamoDbSuppressionStore } from '../shared/store/dynamodb-suppression-store';
import type { DailyUsage } from '../shared/store/ports';
import type { SecretSealer } from '../shared/webhooks/sealing';
import { listMessages } from './activity';
import type { IdentityResolver } from './identity';
import type { DynamoDbReputationStore } from '../shared/store/dynamodb-reputation-store';
import { revealKey, sealingWith } from './key-reveal';
import { keyOptions, readKeyRequest } from './key-request';
import { describe, generateKey, memberOrganizations, revokeKey, rotateKey, userOf } from './me';
import { organizationViews } from './organizations';
import { cancelScheduled, listSchedules } from './schedules';
import { listSuppressions, removeSuppression } from './suppressions';
import { listTemplates, previewMemberTemplate } from './templates';
import type { TemplateStore } from '../shared/templates/template-store';
import { hashApiKey } from '../shared/domain/api-keys';
import type { CancelScheduleDependencies, RetireDependencies } from '../shared/schedules/key-schedules';
import { retireKeySchedules } from '../shared/schedules/key-schedules';
import type { DynamoDbScheduleStore } from '../shared/schedules/schedule-store';

export interface MeDependencies {
  readonly keys: DynamoDbKeyStore;
  /** Seals new keys and opens them for their owner; undefined when reveal is off (API_KEY_REVEAL=false). */
  readonly keySealer: SecretSealer | undefined;
  readonly activity: Pick<DynamoDbActivityStore, 'page'>;
  readonly suppressions: Pick<DynamoDbSuppressionStore, 'list' | 'remove'>;
  /** Scheduled messages: Activity lists and cancels them; a key's die with it (CONTRACT section 13 item 5). */
  readonly schedules: DynamoDbScheduleStore;
  /** The timer a cancelled schedule's is deleted from, and where its `email.cancelled` webhook goes (as the cancel function's). */
  readonly timer: CancelScheduleDependencies['timer'];
  readonly notices: CancelScheduleDependencies['notices'];
  /** The member Organizations' templates, read only: listed, and rendered for a preview. */
  readonly templates: Pick<TemplateStore, 'list' | 'read'>;
  readonly usage: Pick<DailyUsage, 'used'>;
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
    // The answers to generate, rotate and reveal hold the plain key: no cache anywhere may keep it.
    headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', 'X-Request-Id': requestId },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  };
}

export function createMeHandler(deps: MeDependencies, tracing?: Tracing) {
  const { logger, metrics, now, keys, keySealer } = deps;
  const seal = sealingWith(keySealer);
  // A schedule cancelled here (Cancel, or with its key) is disarmed and told of as the cancel endpoint's are.
  const scheduling: RetireDependencies = {
    schedules: deps.schedules,
    organizations: deps.schedules.organizations,
    timer: deps.timer,
    notices: deps.notices,
    now,
    warn: (message, details) => logger.warn(message, details),
  };
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
      requireJsonMediaIfBody(event.headers, event.body);
      const identity = await deps.identity.resolve(event.requestContext.authorizer?.jwt?.claims, event.headers?.authorization);
      const user = await userOf(identity, keys);
      logger.appendKeys({ userId: user.id });
      const operation = `${event.requestContext.http.method.toUpperCase()} ${event.rawPath}`;
      const query = event.queryStringParameters ?? {};
      const render = matchPath(API_ROUTES.meTemplateRender.path, event.rawPath)?.parameters;
      if (render) return json(200, await previewMemberTemplate(await memberOrganizations(user, keys), render.Name, event.body, event.isBase64Encoded, deps.templates), requestId);
      switch (operation) {
        case 'GET /v1.2/me': {
          const organizations = await organizationViews(await memberOrganizations(user, keys), deps.usage, deps.reputations, now());
          return json(200, await describe(user, keys, organizations, keySealer !== undefined), requestId);
        }
        case 'GET /v1.2/me/api-key':
          return json(200, await revealKey(user, keySealer, { logger, metrics }), requestId);
        case 'POST /v1.2/me/api-key':
          return json(201, await generateKey(user, keys, keyOptions(readKeyRequest(event.body, event.isBase64Encoded, now()), seal)), requestId);
        case 'POST /v1.2/me/api-key/rotate': {
          const request = readKeyRequest(event.body, event.isBase64Encoded, now());
          const rotated = await rotateKey(user, keys, keyOptions(request, seal));
          // The old key's scheduled messages die with it, unless "Keep my scheduled messages".
          if (user.keyHash) await retireKeySchedules(user, user.keyHash, request.keepSchedules ? hashApiKey(rotated.Key) : undefined, scheduling);
          return json(200, rotated, requestId);
        }
        case 'GET /v1.2/me/messages':
          return json(200, await listMessages(await memberOrganizations(user, keys), query, deps.activity), requestId);
        case 'GET /v1.2/me/suppressions':
          return json(200, await listSuppressions(await memberOrganizations(user, keys), query, deps.suppressions), requestId);
        case 'GET /v1.2/me/schedules':
          return json(200, await listSchedules(await memberOrganizations(user, keys), query, deps.schedules.organizations), requestId);
        case 'DELETE /v1.2/me/schedules':
          return json(200, await cancelScheduled(await memberOrganizations(user, keys), query, scheduling), requestId);
        case 'GET /v1.2/me/templates':
          return json(200, await listTemplates(await memberOrganizations(user, keys), query, deps.templates), requestId);
        case 'DELETE /v1.2/me/suppressions':
          await removeSuppression(await memberOrganizations(user, keys), query, deps.suppressions);
          logger.info('suppression removed on the settings page', { organizationId: query.organizationId });
          return json(204, undefined, requestId);
        default:
          // DELETE /v1.2/me/api-key: the route middleware lets nothing else through.
          await revokeKey(user, keys);
          if (user.keyHash) await retireKeySchedules(user, user.keyHash, undefined, scheduling);
          return json(204, undefined, requestId);
      }
    });
}
