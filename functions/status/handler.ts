/**
 * POST /v1.2/email/status: the API-key chain every key endpoint shares, and `handleStatusRequest`.
 * Lambda runs it through `index.ts`; the local stack and the tests run this same chain.
 */
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { API_ROUTES } from '../shared/http/api-routes';
import type { ApiKeyEvent } from '../shared/http/api-key-chain';
import { apiKeyChain } from '../shared/http/api-key-chain';
import type { Config } from '../shared/runtime/config';
import type { Tracing } from '../shared/runtime/observability';
import type { Caller } from '../shared/auth/caller';
import type { StatusDependencies } from './status-request';
import { handleStatusRequest } from './status-request';

export const STATUS_PATH = API_ROUTES.status.path;
/** A full request (100 ids) is under 10 KiB; nothing larger is worth reading. */
export const STATUS_MAX_BODY_BYTES = 64 * 1024;

export interface StatusHandlerDependencies extends StatusDependencies {
  readonly config: Config;
  readonly metrics: Metrics;
  readonly now: () => number;
}

export function createStatusHandler(deps: StatusHandlerDependencies, tracing?: Tracing) {
  return apiKeyChain({ ...deps, tracing, problemTypeBase: deps.config.problemTypeBase, maxBodyBytes: STATUS_MAX_BODY_BYTES, scope: 'status', route: { serves: [API_ROUTES.status] } }).handler(
    (event: ApiKeyEvent) => handleStatusRequest({ caller: event.caller as Caller, body: event.body, requestId: event.requestContext.requestId }, deps),
  );
}
