/**
 * POST /v1.2/email/cancel: the API-key chain every key endpoint shares, and `handleCancelRequest`.
 * Lambda runs it through `index.ts`; the local stack and the tests run this same chain.
 */
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { Caller } from '../shared/auth/caller';
import { API_ROUTES } from '../shared/http/api-routes';
import type { ApiKeyEvent } from '../shared/http/api-key-chain';
import { apiKeyChain } from '../shared/http/api-key-chain';
import type { Config } from '../shared/runtime/config';
import type { Tracing } from '../shared/runtime/observability';
import type { CancelDependencies } from './cancel-request';
import { handleCancelRequest } from './cancel-request';

export const CANCEL_PATH = API_ROUTES.cancel.path;
/** A full request (100 ids) is under 10 KiB; nothing larger is worth reading. */
export const CANCEL_MAX_BODY_BYTES = 64 * 1024;

export interface CancelHandlerDependencies extends CancelDependencies {
  readonly config: Config;
  readonly metrics: Metrics;
}

export function createCancelHandler(deps: CancelHandlerDependencies, tracing?: Tracing) {
  return apiKeyChain({ ...deps, tracing, problemTypeBase: deps.config.problemTypeBase, maxBodyBytes: CANCEL_MAX_BODY_BYTES, scope: 'cancel', route: { serves: [API_ROUTES.cancel] } }).handler(
    (event: ApiKeyEvent) => handleCancelRequest({ caller: event.caller as Caller, body: event.body, requestId: event.requestContext.requestId }, deps),
  );
}
