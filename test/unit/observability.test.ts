import { describe, expect, it, jest } from '@jest/globals';
import middy from '@middy/core';
import { IdentityProviderUnavailableProblem } from '../../functions/me/problems';
import { problemResponses } from '../../functions/shared/http/middleware/problem-responses';
import { createLogger, createTracing } from '../../functions/shared/runtime/observability';
import { httpApiEvent, lambdaContext } from '../support/events';

describe('createTracing', () => {
  it('is off outside Lambda, so local runs and tests never load the X-Ray SDK', async () => {
    await expect(createTracing({})).resolves.toBeUndefined();
  });

  it('is off in Lambda when POWERTOOLS_TRACE_ENABLED=false', async () => {
    await expect(createTracing({ AWS_LAMBDA_FUNCTION_NAME: 'send', POWERTOOLS_TRACE_ENABLED: 'false' })).resolves.toBeUndefined();
  });

  it('is on in Lambda by default, with a handler middleware and a client instrument', async () => {
    const tracing = await createTracing({ AWS_LAMBDA_FUNCTION_NAME: 'send' });
    expect(tracing).toBeDefined();
    expect(typeof tracing!.middleware.before).toBe('function');
    const client = { middlewareStack: { add: () => undefined, remove: () => true, use: () => undefined }, send: async () => ({}) };
    expect(tracing!.instrument(client)).toBe(client);
  });
});

describe('createLogger', () => {
  it('logs a problem whose cause has a getter for its message, as a DOMException does, and the problem still answers 503', async () => {
    // The logger maps each logged error's stack (source-mapped-errors.ts). A copy of such an error
    // once threw inside the log call, and the 503 of a fetch timeout became a 500. (Jest's
    // DOMException comes from another realm, where it is no Error here: this one is made alike.
    // test/infra/source-mapped-errors.test.ts logs a real one in a plain Node.)
    class TimeoutFault extends Error {
      override get message() {
        return 'The operation was aborted due to timeout';
      }
    }
    const written: string[] = [];
    const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    let response;
    try {
      const handler = middy(async () => {
        throw new IdentityProviderUnavailableProblem({ cause: new TimeoutFault() });
      }).use(problemResponses({ logger: createLogger(), typeBase: '/problems/' }));
      response = await handler(httpApiEvent({ body: {} }), lambdaContext());
    } finally {
      spy.mockRestore();
    }
    expect(response).toMatchObject({ statusCode: 503, headers: { 'Retry-After': '5' } });
    const record = JSON.parse(written.find((line) => line.includes('"service unavailable"'))!) as { cause: Record<string, unknown> };
    expect(record.cause).toMatchObject({ name: 'Error', message: 'The operation was aborted due to timeout' });
  });
});
