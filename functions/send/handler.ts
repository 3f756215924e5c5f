/**
 * POST /v1.2/email/send: the middy chain and nothing else; the work is in `handleSendRequest`.
 * Lambda runs it through `index.ts`; the local stack and the tests run this same chain.
 */
import type { Context } from 'aws-lambda';
import { ALL_ROUTES, API_ROUTES } from '../shared/http/api-routes';
import type { ApiKeyEvent } from '../shared/http/api-key-chain';
import { apiKeyChain } from '../shared/http/api-key-chain';
import type { Tracing } from '../shared/runtime/observability';
import type { Caller } from './authorisation';
import type { SendDependencies } from './send-request';
import { handleSendRequest } from './send-request';

export { SEND_PATH } from './route';

/** Time kept back from the Lambda deadline to write the response. */
const DEADLINE_MARGIN_MS = 1_500;
/** After its end an invocation is certainly gone; a retry may then resume its idempotent request. */
const LOCK_GRACE_MS = 2_000;

export function createHandler(deps: SendDependencies, tracing?: Tracing) {
  const { config, now } = deps;
  // API Gateway's `$default`: it answers 404 and 405 for every route of the API.
  return apiKeyChain({ ...deps, tracing, problemTypeBase: config.problemTypeBase, maxBodyBytes: config.maxBodyBytes, scope: 'send', route: { serves: [API_ROUTES.send], known: ALL_ROUTES } })
    .handler(async (event: ApiKeyEvent, context: Context) => {
      const remaining = typeof context?.getRemainingTimeInMillis === 'function' ? context.getRemainingTimeInMillis() : undefined;
      const end = now() + (remaining ?? config.sendDeadlineMs + DEADLINE_MARGIN_MS);
      return handleSendRequest(
        {
          caller: event.caller as Caller,
          idempotencyKey: event.headers?.['idempotency-key'],
          body: event.body,
          requestId: event.requestContext.requestId,
          deadline: end - DEADLINE_MARGIN_MS,
          lockUntil: end + LOCK_GRACE_MS,
        },
        deps,
      );
    });
}
