/**
 * The Lambda entry point of the settings API: configuration from the environment, dependencies
 * built once per instance, and the middy chain of `handler.ts` exported as `handler`.
 */
import { createTracing } from '../shared/runtime/observability';
import { loadMeConfig } from './config';
import { createMeDependencies } from './dependencies';
import { createMeHandler } from './handler';

const tracing = await createTracing();
export const handler = createMeHandler(createMeDependencies(loadMeConfig(), tracing && { instrument: tracing.instrument }), tracing);
