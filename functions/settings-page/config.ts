/**
 * What the settings page needs to know to sign users in, read once when the function starts:
 * the OpenID provider and the page's client there. Served to the page as `/settings/config.json`,
 * and used for the page's Content-Security-Policy.
 */
import { ConfigError, DEFAULTS } from '../shared/runtime/config';
import { SettingsReader, fromEnv } from '../shared/runtime/settings-reader';
import { readKeyReveal } from '../me/config';

export interface PageConfig {
  readonly issuer: string;
  readonly clientId: string;
  readonly scope: string;
  /**
   * Where "Sign out" sends the browser, when the provider's discovery document names no
   * `end_session_endpoint` (Cognito: its `/logout?client_id=…&logout_uri=…`).
   */
  readonly logoutUrl: string | undefined;
  /** Origins the page fetches from besides its own: the issuer's, and its token endpoint's if elsewhere. */
  readonly connectOrigins: readonly string[];
  readonly problemTypeBase: string;
  /** Whether a key can be shown again (`API_KEY_REVEAL`, as the settings API reads it): off, the page is show-once. */
  readonly keyReveal: boolean;
}

export function loadPageConfig(env: Readonly<Record<string, string | undefined>> = process.env): PageConfig {
  const read = new SettingsReader(fromEnv(env));
  const issuer = read.endpoint('OIDC_ISSUER');
  const clientId = read.text('OIDC_CLIENT_ID');
  if (issuer === undefined) read.problem('OIDC_ISSUER is required (the OpenID provider the settings page signs in with)');
  if (clientId === undefined) read.problem('OIDC_CLIENT_ID is required (the settings page\'s client at the OpenID provider)');
  const origins = (read.text('OIDC_CONNECT_ORIGINS') ?? '').split(/\s+/).filter(Boolean);
  for (const origin of origins) if (!URL.canParse(origin)) read.problem(`OIDC_CONNECT_ORIGINS must list URLs, got "${origin}"`);
  const config: PageConfig = {
    issuer: issuer ?? '',
    clientId: clientId ?? '',
    scope: read.text('OIDC_SCOPE', 'openid email'),
    logoutUrl: read.endpoint('OIDC_LOGOUT_URL'),
    connectOrigins: [...new Set([issuer, ...origins].filter((url): url is string => url !== undefined && URL.canParse(url)).map((url) => new URL(url).origin))],
    problemTypeBase: read.text('PROBLEM_TYPE_BASE', DEFAULTS.problemTypeBase),
    keyReveal: readKeyReveal(read),
  };
  read.finish((message) => new ConfigError(`Invalid configuration: ${message}`));
  return config;
}
