/**
 * The one place errors become responses: an `HttpProblem` becomes its RFC 9457 problem
 * document; anything else is logged and becomes a generic 500 that carries the request id and
 * nothing of the error itself.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { redactingReplacer } from '../../domain/api-keys';
import { HttpProblem } from '../problems';

export interface ProblemResponsesOptions {
  readonly logger: Logger;
  /** `PROBLEM_TYPE_BASE`: a URL, or a path (`/problems/`) read against the request's own origin. */
  readonly typeBase: string;
}

/**
 * Where the request was addressed, as API Gateway saw it: its domain name (the custom domain when
 * one is used) and the scheme it says in `X-Forwarded-Proto`. Undefined when the event has none.
 */
export function requestOrigin(event: APIGatewayProxyEventV2 | undefined): string | undefined {
  const host = event?.requestContext?.domainName;
  if (!host) return undefined;
  return `${event.headers?.['x-forwarded-proto'] === 'http' ? 'http' : 'https'}://${host}`;
}

/** A problem type URI: the base and slug, made absolute against `origin` when the base is a path. */
export function problemTypeUri(typeBase: string, slug: string, origin: string | undefined): string {
  const reference = `${typeBase}${slug}`;
  if (URL.canParse(reference) || origin === undefined || !URL.canParse(reference, origin)) return reference;
  return new URL(reference, origin).href;
}

export function requestIdOf(request: middy.Request<APIGatewayProxyEventV2>): string {
  return request.event?.requestContext?.requestId ?? request.context?.awsRequestId ?? 'unknown';
}

export function problemResponses(options: ProblemResponsesOptions): middy.MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2> {
  const { logger, typeBase } = options;

  const problemResponsesOnError: middy.MiddlewareFn<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2> = async (request) => {
    const requestId = requestIdOf(request);
    const error = request.error;
    const problem = error instanceof HttpProblem ? error : undefined;
    if (!problem) {
      logger.error('unexpected fault', { requestId, error: error as Error });
    } else if (problem.status >= 500) {
      logger.warn('service unavailable', { requestId, problem: problem.slug, cause: problem.cause as Error });
    }
    request.response = problemResponse(problem, typeBase, requestId, requestOrigin(request.event));
  };

  return { onError: problemResponsesOnError };
}

/**
 * The RFC 9457 response for a problem (undefined: the generic 500). Also used by the local
 * gateway for its own answers (413, 503 while starting, …), so they have exactly this form.
 */
export function problemResponse(problem: HttpProblem | undefined, typeBase: string, requestId: string, origin?: string) {
  const status = problem?.status ?? 500;
  const body = problem
    ? {
        type: problemTypeUri(typeBase, problem.slug, origin),
        title: problem.title,
        status,
        ...(problem.detail !== undefined && { detail: problem.detail }),
        ...(problem.errors && { errors: problem.errors }),
        requestId,
      }
    : {
        type: problemTypeUri(typeBase, 'internal', origin),
        title: 'Internal error',
        status,
        detail: 'The service failed unexpectedly. Nothing about the fault is shown here; quote the request id when reporting it.',
        requestId,
      };
  return {
    statusCode: status,
    headers: {
      ...problem?.headers,
      'Content-Type': 'application/problem+json',
      'Cache-Control': 'no-store',
      'X-Request-Id': requestId,
    } as Record<string, string>,
    // A detail may quote what the client sent (a path, a name): a key sent in the wrong place is not echoed.
    body: JSON.stringify(body, redactingReplacer),
  };
}
