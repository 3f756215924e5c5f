/**
 * The settings API's configuration, read once when the function starts, with the same reader
 * and the same store settings as the send function (functions/shared/runtime/config.ts).
 */
import type { StoreConfig } from '../shared/runtime/config';
import { ConfigError, readStoreConfig } from '../shared/runtime/config';
import { SettingsReader, fromEnv } from '../shared/runtime/settings-reader';

export interface MeConfig extends StoreConfig {
  /** The OpenID provider whose access tokens the API accepts (Cognito's, or the one named at deploy time). */
  readonly oidcIssuer: string | undefined;
  /** Its userinfo endpoint, when discovery from the issuer should not be used. */
  readonly oidcUserinfoEndpoint: string | undefined;
}

export function loadMeConfig(env: Readonly<Record<string, string | undefined>> = process.env): MeConfig {
  const read = new SettingsReader(fromEnv(env));
  const config: MeConfig = {
    ...readStoreConfig(read, env),
    oidcIssuer: read.endpoint('OIDC_ISSUER'),
    oidcUserinfoEndpoint: read.endpoint('OIDC_USERINFO_ENDPOINT'),
  };
  read.finish((message) => new ConfigError(`Invalid configuration: ${message}`));
  return config;
}
