/**
 * The Lambda entry point of the settings page: its files and settings loaded once per instance.
 */
import { createLogger } from '../shared/runtime/observability';
import { loadAssets } from './assets';
import { loadPageConfig } from './config';
import { createSettingsPageHandler } from './handler';

export const handler = createSettingsPageHandler({ config: loadPageConfig(), assets: loadAssets(), logger: createLogger() });
