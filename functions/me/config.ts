/**
 * The settings API's configuration, read once when the function starts, with the same reader
 * and the same store settings as the send function (functions/shared/runtime/config.ts).
 */
import type { Config, StoreConfig } from '../shared/runtime/config';
import { ConfigError, readScheduler, readStoreConfig } from '../shared/runtime/config';
import { SettingsReader, fromEnv } from '../shared/runtime/settings-reader';

/**
 * `webhookQueueUrl` and `scheduler`: a schedule cancelled here (Activity's Cancel, or with the key
 * that made it) has its timer deleted and its `email.cancelled` webhook queued, as the cancel
 * endpoint does. Unset locally, where the local stack hands over its own timer and webhook queue.
 */
export interface MeConfig extends StoreConfig, Pick<Config, 'webhookQueueUrl' | 'scheduler'> {
  /** The OpenID provider whose access tokens the API accepts (Cognito's, or the one named at deploy time). */
  readonly oidcIssuer: string | undefined;
  /** Its userinfo endpoint, when discovery from the issuer should not be used. */
  readonly oidcUserinfoEndpoint: string | undefined;
  /**
   * Whether new keys are kept sealed so their owner can see them again (`API_KEY_REVEAL`, default
   * on; CONTRACT section 3, item 2). Off: nothing is sealed, and the page shows a key once.
   */
  readonly apiKeyReveal: boolean;
  /** The KMS key that seals API keys in AWS (`API_KEY_KMS_KEY_ID`); unset locally, where the local sealing key does. */
  readonly apiKeyKmsKeyId: string | undefined;
}

/** `API_KEY_REVEAL`, for the settings page's own configuration too (the two must agree). */
export function readKeyReveal(read: SettingsReader): boolean {
  return read.boolean('API_KEY_REVEAL', true);
}

export function loadMeConfig(env: Readonly<Record<string, string | undefined>> = process.env): MeConfig {
  const read = new SettingsReader(fromEnv(env));
  const config: MeConfig = {
    ...readStoreConfig(read, env),
    oidcIssuer: read.endpoint('OIDC_ISSUER'),
    oidcUserinfoEndpoint: read.endpoint('OIDC_USERINFO_ENDPOINT'),
    apiKeyReveal: readKeyReveal(read),
    apiKeyKmsKeyId: read.text('API_KEY_KMS_KEY_ID'),
    webhookQueueUrl: read.endpoint('WEBHOOK_QUEUE_URL'),
    scheduler: readScheduler(read),
  };
  read.finish((message) => new ConfigError(`Invalid configuration: ${message}`));
  return config;
}
