/**
 * The service's logger, metrics and tracing, built once per function instance.
 *
 * What they may carry is decided where they are called: request id, Organization id, user id,
 * counts, codes, status and latency; never the API key, the Authorization header, addresses,
 * subjects or bodies.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type middy from '@middy/core';
import { redactingReplacer } from '../domain/api-keys';
import { sourceMappedErrors } from './source-mapped-errors';

export const SERVICE_NAME = process.env.POWERTOOLS_SERVICE_NAME ?? 'email-send-api';
export const METRICS_NAMESPACE = process.env.POWERTOOLS_METRICS_NAMESPACE ?? 'EmailSendApi';

export function createLogger(): Logger {
  // POWERTOOLS_LOG_LEVEL sets the level; POWERTOOLS_LOGGER_SAMPLE_RATE (0..1) turns on DEBUG for
  // that share of invocations. An error's stack names our source lines, read from the bundle's
  // source maps when it is logged (source-mapped-errors.ts), not at every cold start.
  // Every string of every line is redacted of key-like text: a key a client put in a path (or
  // anywhere else that is logged) never reaches a log line.
  return new Logger({ serviceName: SERVICE_NAME, jsonReplacerFn: (key, value) => sourceMappedErrors(key, redactingReplacer(key, value)) });
}

/** CloudWatch embedded-metric-format metrics; POWERTOOLS_METRICS_DISABLED=true turns them off. */
export function createMetrics(): Metrics {
  return new Metrics({ namespace: METRICS_NAMESPACE, serviceName: SERVICE_NAME });
}

export interface Tracing {
  /** Adds X-Ray subsegments for every call the client makes. */
  instrument<T>(client: T): T;
  readonly middleware: middy.MiddlewareObj;
}

/**
 * X-Ray tracing through Powertools Tracer, only inside Lambda and unless
 * POWERTOOLS_TRACE_ENABLED=false. The tracer (and the X-Ray SDK under it) is imported only
 * then: it costs 10–20 ms of cold start (npm run bench) that an untraced function should not pay.
 */
export async function createTracing(env: NodeJS.ProcessEnv = process.env): Promise<Tracing | undefined> {
  if (env.POWERTOOLS_TRACE_ENABLED === 'false' || !env.AWS_LAMBDA_FUNCTION_NAME) return undefined;
  const [{ Tracer }, { captureLambdaHandler }] = await Promise.all([
    import('@aws-lambda-powertools/tracer'),
    import('@aws-lambda-powertools/tracer/middleware'),
  ]);
  const tracer = new Tracer({ serviceName: SERVICE_NAME });
  return {
    instrument: (client) => tracer.captureAWSv3Client(client),
    // The response holds only message ids, but traces have no business holding bodies at all.
    middleware: captureLambdaHandler(tracer, { captureResponse: false }) as middy.MiddlewareObj,
  };
}
