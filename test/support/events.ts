import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';

export interface EventOptions {
  readonly method?: string;
  readonly path?: string;
  readonly headers?: Record<string, string>;
  /** An object is sent as JSON; a string is sent as it is. */
  readonly body?: unknown;
  readonly isBase64Encoded?: boolean;
}

/** An API Gateway HTTP API (payload v2) event, as AWS delivers it: header names lower-cased. */
export function httpApiEvent(options: EventOptions = {}): APIGatewayProxyEventV2 {
  const method = options.method ?? 'POST';
  const path = options.path ?? '/v1.2/email/send';
  const headers = Object.fromEntries(Object.entries(options.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
  const body = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers,
    requestContext: {
      accountId: '123456789012',
      apiId: 'local',
      domainName: 'localhost',
      domainPrefix: 'localhost',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'jest' },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: new Date().toISOString(),
      timeEpoch: Date.now(),
    },
    ...(body !== undefined && { body }),
    isBase64Encoded: options.isBase64Encoded ?? false,
  };
}

export function lambdaContext(remainingMs = 28_000): Context {
  const deadline = Date.now() + remainingMs;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: 'send',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:send',
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: '/aws/lambda/send',
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
