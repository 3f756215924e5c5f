/**
 * The clients of the delivery lifecycle and of scheduled sends: SQS (the webhook and schedule queues), KMS (sealed webhook
 * secrets) and EventBridge Scheduler. Apart from clients.ts so functions that need none of them never carry them.
 */
import { KMSClient } from '@aws-sdk/client-kms';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { ClientOptions } from './clients';
import { asIs, httpHandler } from './clients';
import type { Config } from './config';

export function createSqsClient(config: Pick<Config, 'region'>, options: ClientOptions = {}): SQSClient {
  const { instrument = asIs, credentials } = options;
  return instrument(new SQSClient({ region: config.region, ...(credentials && { credentials }), requestHandler: httpHandler(2_000, 5_000) }));
}

export function createKmsClient(config: Pick<Config, 'region'>, options: ClientOptions = {}): KMSClient {
  const { instrument = asIs, credentials } = options;
  return instrument(new KMSClient({ region: config.region, ...(credentials && { credentials }), requestHandler: httpHandler(2_000, 5_000) }));
}

/** EventBridge Scheduler: the send and cancel functions create and delete one-time schedules. */
export function createSchedulerClient(config: Pick<Config, 'region'>, options: ClientOptions = {}): SchedulerClient {
  const { instrument = asIs, credentials } = options;
  return instrument(new SchedulerClient({ region: config.region, ...(credentials && { credentials }), requestHandler: httpHandler(2_000, 5_000) }));
}
