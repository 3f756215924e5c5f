/** The events function's Lambda entry: configuration, dependencies and tracing built once per instance. */
import { loadConfig } from '../shared/runtime/config';
import { createTracing } from '../shared/runtime/observability';
import { createEventsDependencies } from './dependencies';
import { createEventsHandler } from './handler';

const tracing = await createTracing();
export const handler = createEventsHandler(createEventsDependencies(loadConfig(), tracing && { instrument: tracing.instrument }), tracing);
