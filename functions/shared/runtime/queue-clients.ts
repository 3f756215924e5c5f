/**
 * The clients of the delivery lifecycle: SQS (the webhook queue) and KMS (sealed webhook
 * secrets). Apart from clients.ts so the send function's bundle never carries them.
 */
import { KMSClient } from '@aws-sdk/client-kms';
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
