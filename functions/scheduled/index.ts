/** The scheduled-send function's Lambda entry: configuration, dependencies and tracing built once per instance. */
import { loadConfig } from '../shared/runtime/config';
import { createTracing } from '../shared/runtime/observability';
import { createFireDependencies } from './dependencies';
import { createScheduledHandler } from './handler';

const tracing = await createTracing();
export const handler = createScheduledHandler(createFireDependencies(loadConfig(), tracing && { instrument: tracing.instrument }), tracing);
