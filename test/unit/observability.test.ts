import { describe, expect, it } from '@jest/globals';
import { createTracing } from '../../functions/shared/runtime/observability';

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
