/** The templates function's Lambda entry: configuration, dependencies and tracing built once per instance. */
import { loadConfig } from '../shared/runtime/config';
import { createTracing } from '../shared/runtime/observability';
import { createTemplateDependencies } from './dependencies';
import { createTemplateHandler } from './handler';

const tracing = await createTracing();
export const handler = createTemplateHandler(createTemplateDependencies(loadConfig(), tracing && { instrument: tracing.instrument }), tracing);
