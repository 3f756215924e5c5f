/** The cancel function's Lambda entry: configuration, dependencies and tracing built once per instance. */
import { loadConfig } from '../shared/runtime/config';
import { createTracing } from '../shared/runtime/observability';
import { createCancelDependencies } from './dependencies';
import { createCancelHandler } from './handler';

const tracing = await createTracing();
export const handler = createCancelHandler(createCancelDependencies(loadConfig(), tracing && { instrument: tracing.instrument }), tracing);
