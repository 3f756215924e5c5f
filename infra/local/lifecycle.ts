/**
 * The delivery lifecycle on a laptop (CONTRACT section 10), wired as in AWS with in-process
 * stand-ins for what AWS provides: the mailbox simulator publishes SES events to a local queue
 * (EventBridge rule → SQS), the events function's own handler consumes it and queues webhooks
 * on a second local queue, whose consumer is the webhook function's own handler. The status
 * endpoint is the status function's own handler, behind the local gateway's route.
 */
import type { EventSink } from '../../functions/shared/mail/test-mailer';
import type { Credentials } from '../../functions/shared/runtime/clients';
import type { Config } from '../../functions/shared/runtime/config';
import { createEventsDependencies } from '../../functions/events/dependencies';
import { createEventsHandler } from '../../functions/events/handler';
import { createStatusDependencies } from '../../functions/status/dependencies';
import { STATUS_PATH, createStatusHandler } from '../../functions/status/handler';
import { createWebhookDependencies } from '../../functions/webhooks/dependencies';
import { MAX_ATTEMPTS } from '../../functions/webhooks/deliver';
import { createWebhookHandler } from '../../functions/webhooks/handler';
import type { GatewayRoute, LambdaHandler } from './gateway/routing';
import { LocalQueue } from './local-queue';
import { createMailboxSimulator } from './mailbox-simulator';
import type { SentListener } from './ses-rate-gate';
import { localSealer } from './sealing-key';

export interface LocalLifecycleOptions {
  readonly config: Config;
  readonly credentials: Credentials | undefined;
  /** The SES emulator itself, for the out-of-office auto-replies; absent with an external SES_ENDPOINT. */
  readonly emulator: string | undefined;
  /** Where the webhook worker finds the local sealing key (`LOCAL_SEALING_KEY`, `LOCAL_DATA_DIR`): the stack's settings. */
  readonly sealingEnv: Readonly<Record<string, string | undefined>>;
  /** Multiplies the webhook retry delays (tests); 1 keeps SES's 5 s, 5 min, … schedule. */
  readonly webhookRetryScale?: number | undefined;
  readonly log: (line: string) => void;
}

export interface LocalLifecycle {
  readonly statusRoute: GatewayRoute;
  /** For the SES front: every accepted SendEmail. */
  readonly simulate: SentListener;
  /** Hands one SES event to the events queue (the tracking endpoint's Opens and Clicks). */
  readonly publishEvent: (event: Record<string, unknown>) => void;
  readonly webhookQueue: LocalQueue;
  /** Test mode's simulated events, into the same events queue as the simulator's. */
  readonly testEvents: EventSink;
  stop(): Promise<void>;
}

export function startLocalLifecycle(options: LocalLifecycleOptions): LocalLifecycle {
  const { config, credentials, log } = options;
  const clients = { credentials };
  const region = config.region;
  const webhookQueue = new LocalQueue({ name: 'webhooks', region, maxReceiveCount: MAX_ATTEMPTS, visibilitySeconds: 30, timeScale: options.webhookRetryScale, log });
  webhookQueue.consume(createWebhookHandler(createWebhookDependencies(config, clients, { sealer: localSealer(options.sealingEnv), retries: webhookQueue })));
  const events = new LocalQueue({ name: 'ses-events', region, maxReceiveCount: 5, visibilitySeconds: 1, log });
  events.consume(createEventsHandler(createEventsDependencies(config, clients, webhookQueue)));

  const emulator = options.emulator;
  const publishEvent = (event: Record<string, unknown>) => events.send(JSON.stringify(event));
  const simulate = createMailboxSimulator({
    region,
    publish: publishEvent,
    ...(emulator && { autoReply: (reply) => void sendAutoReply(emulator, reply).catch(() => log('mailbox simulator: the auto-reply could not be stored')) }),
  });
  const statusHandler = createStatusHandler(createStatusDependencies(config, clients));
  return {
    statusRoute: { method: 'POST', path: STATUS_PATH, handler: statusHandler as unknown as LambdaHandler, functionName: 'email-send-api-status-local' },
    simulate,
    publishEvent,
    webhookQueue,
    testEvents: { publish: async (list) => list.forEach((event) => events.send(JSON.stringify(event))) },
    async stop() {
      await events.stop();
      await webhookQueue.stop();
    },
  };
}

/** The simulator's out-of-office reply, stored in the emulator so the viewer shows it. */
async function sendAutoReply(emulator: string, reply: { from: string; to: string; subject: string }): Promise<void> {
  await fetch(`${emulator}/v2/email/outbound-emails`, {
    method: 'POST',
    // The emulator only checks that some credential is named, as SES would check a signature.
    headers: { 'content-type': 'application/json', authorization: 'AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/ses/aws4_request' },
    body: JSON.stringify({
      FromEmailAddress: reply.from,
      Destination: { ToAddresses: [reply.to] },
      Content: { Simple: { Subject: { Data: reply.subject }, Body: { Text: { Data: 'I am out of the office. (Amazon SES mailbox simulator, played by the local stack.)' } } } },
    }),
    signal: AbortSignal.timeout(2_000),
  });
}
