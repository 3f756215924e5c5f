/**
 * One webhook delivery attempt (CONTRACT section 10): the Organization's current URL and secret,
 * the body signed per the Standard Webhooks specification with its `standardwebhooks` library
 * (`webhook-id`, `webhook-timestamp`, `webhook-signature`), one POST with a short timeout, to a
 * public address only (post.ts: a name that resolves to anything else is a failed attempt, and
 * nothing is sent). A 2xx is delivered; anything else is tried again later, on the schedule below, for more than 24
 * hours; then the message goes to the dead-letter queue. A removed webhook, or one whose URL is
 * no longer allowed, drops the delivery: there is no one to tell.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { Webhook } from 'standardwebhooks';
import type { WebhookJob } from '../shared/webhooks/payload';
import type { SecretSealer } from '../shared/webhooks/sealing';
import { webhookUrlProblem } from '../shared/webhooks/webhook-url';
import type { WebhookConfigs } from '../shared/webhooks/webhook-store';
import type { WebhookPoster } from './post';
import { NonPublicAddressError } from './post';

/**
 * Seconds to wait after attempt 1, 2, …: the Standard Webhooks authors' schedule (5 s, 5 min,
 * 30 min, 2 h, 5 h, 10 h, 10 h). Eight attempts over 27 h 35 min; every delay is within SQS's
 * 12-hour visibility limit.
 */
export const RETRY_DELAYS_SECONDS = [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;
/** An endpoint gets this long to answer; a slow one only delays its own retries. */
export const ATTEMPT_TIMEOUT_MS = 5_000;

export interface DeliveryDependencies {
  readonly webhooks: WebhookConfigs;
  readonly sealer: SecretSealer;
  readonly allowLoopbackHttp: boolean;
  readonly post: WebhookPoster;
  readonly logger: Logger;
  readonly now: () => number;
}

export type Attempt = { readonly kind: 'delivered' | 'dropped' } | { readonly kind: 'retry'; readonly afterSeconds: number | undefined };

/** `attempt` counts from 1; undefined `afterSeconds` means there is no attempt left. */
export function retryAfter(attempt: number): number | undefined {
  return RETRY_DELAYS_SECONDS[attempt - 1];
}

export async function deliverWebhook(job: WebhookJob, attempt: number, deps: DeliveryDependencies): Promise<Attempt> {
  const log = { organizationId: job.organizationId, webhookId: job.webhookId, attempt };
  const config = await deps.webhooks.get(job.organizationId);
  if (!config) {
    deps.logger.info('webhook removed; delivery dropped', log);
    return { kind: 'dropped' };
  }
  const problem = webhookUrlProblem(config.url, deps.allowLoopbackHttp);
  if (problem) {
    deps.logger.warn('webhook URL not allowed here; delivery dropped', { ...log, problem });
    return { kind: 'dropped' };
  }
  const secret = await deps.sealer.open(config.sealedSecret, job.organizationId);
  // Signed at each attempt: receivers refuse a timestamp more than a few minutes old.
  const timestamp = new Date(deps.now());
  const signature = new Webhook(secret).sign(job.webhookId, timestamp, job.payload);
  let status: number | undefined;
  let refused: string | undefined;
  try {
    status = await deps.post(config.url, {
      headers: {
        'content-type': 'application/json',
        'user-agent': 'email-send-api-webhooks',
        'webhook-id': job.webhookId,
        'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1_000)),
        'webhook-signature': signature,
      },
      body: job.payload,
      timeoutMs: ATTEMPT_TIMEOUT_MS,
    });
  } catch (error) {
    // DNS may answer differently later (or was being rebound): tried again on the schedule.
    if (error instanceof NonPublicAddressError) refused = error.message;
    status = undefined;
  }
  if (status !== undefined && status >= 200 && status < 300) return { kind: 'delivered' };
  const afterSeconds = retryAfter(attempt);
  deps.logger.warn('webhook delivery failed', { ...log, status: status ?? 'no answer', ...(refused && { refused }), retryInSeconds: afterSeconds ?? 'none: dead-letter queue' });
  return { kind: 'retry', afterSeconds };
}
