/**
 * One structured log line and one status-class metric per request, whatever its outcome. What
 * the business logic learnt (Organization, user, counts) it appends to the logger's keys
 * (`logger.appendKeys`), so it is on this line too; `injectLambdaContext({ resetKeys: true })`
 * clears those keys after each invocation.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

export interface RequestLogOptions {
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly now: () => number;
}

export function requestLog(options: RequestLogOptions): middy.MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2> {
  const { logger, metrics, now } = options;
  const started = new WeakMap<object, number>();

  const requestLogBefore: middy.MiddlewareFn<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2> = async (request) => {
    started.set(request, now());
    // Counted in the request's own metric set, which is then never empty (Powertools warns on
    // every flush of an empty one).
    metrics.addMetric('Requests', MetricUnit.Count, 1);
  };

  const requestLogAfter: middy.MiddlewareFn<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2> = async (request) => {
    const statusCode = request.response?.statusCode ?? 500;
    const { event } = request;
    logger.info('request finished', {
      requestId: event.requestContext?.requestId,
      method: event.requestContext?.http?.method,
      path: event.rawPath,
      statusCode,
      latencyMs: now() - (started.get(request) ?? now()),
    });
    const byStatus = metrics.singleMetric();
    byStatus.addDimension('StatusClass', `${Math.floor(statusCode / 100)}xx`);
    byStatus.addMetric('Responses', MetricUnit.Count, 1);
  };

  return { before: requestLogBefore, after: requestLogAfter, onError: requestLogAfter };
}
