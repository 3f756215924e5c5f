/** The webhook delivery function's Lambda entry: configuration, dependencies and tracing built once per instance. */
import { loadConfig } from '../shared/runtime/config';
import { createTracing } from '../shared/runtime/observability';
import { createWebhookDependencies } from './dependencies';
import { createWebhookHandler } from './handler';

const tracing = await createTracing();
export const handler = createWebhookHandler(createWebhookDependencies(loadConfig(), tracing && { instrument: tracing.instrument }), tracing);
