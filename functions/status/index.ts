/** The status function's Lambda entry: configuration, dependencies and tracing built once per instance. */
import { loadConfig } from '../shared/runtime/config';
import { createTracing } from '../shared/runtime/observability';
import { createStatusDependencies } from './dependencies';
import { createStatusHandler } from './handler';

const tracing = await createTracing();
export const handler = createStatusHandler(createStatusDependencies(loadConfig(), tracing && { instrument: tracing.instrument }), tracing);
