import { Logger } from '@aws-lambda-powertools/logger';

/**
 * The service's structured logger. What it may carry is decided where it is called: never the
 * API key, the Authorization header, addresses or message bodies.
 */
export function createLogger(): Logger {
  return new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'email-send-api' });
}
