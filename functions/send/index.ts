/**
 * The Lambda entry point: configuration from the environment, dependencies and tracing built
 * once per instance, and the middy chain of `handler.ts` exported as `handler`. The local stack
 * and the tests build the same chain from a `Config` of their own instead of importing this.
 */
import { loadConfig } from '../shared/runtime/config';
import { createTracing } from '../shared/runtime/observability';
import { createDependencies } from './dependencies';
import { createHandler } from './handler';

const tracing = await createTracing();
export const handler = createHandler(createDependencies(loadConfig(), tracing && { instrument: tracing.instrument }), tracing);
