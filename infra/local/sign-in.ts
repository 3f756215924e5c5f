/**
 * The settings page on the local stack: the embedded OpenID provider, and the gateway routes of
 * the settings API (behind a JWT authorizer that checks the provider's tokens as API Gateway's
 * does) and of the page's files. The handlers are the very ones Lambda runs.
 */
import { readKeyReveal } from '../../functions/me/config';
import { createMeDependencies } from '../../functions/me/dependencies';
import { createMeHandler } from '../../functions/me/handler';
import { loadAssets } from '../../functions/settings-page/assets';
import { createSettingsPageHandler } from '../../functions/settings-page/handler';
import { loadPageConfig } from '../../functions/settings-page/config';
import { ME_ROUTES, SETTINGS_PAGE_ROUTES } from '../../functions/shared/http/api-routes';
import type { ApiRoute } from '../../functions/shared/http/api-routes';
import type { Credentials } from '../../functions/shared/runtime/clients';
import type { StoreConfig } from '../../functions/shared/runtime/config';
import { ConfigError } from '../../functions/shared/runtime/config';
import type { LocalParts } from '../../functions/shared/schedules/dependencies';
import { createLogger } from '../../functions/shared/runtime/observability';
import { SettingsReader, fromEnv } from '../../functions/shared/runtime/settings-reader';
import { createJwtAuthorizer } from './gateway/jwt-authorizer';
import type { GatewayRoute, JwtAuthorizer, LambdaHandler } from './gateway/routing';
import type { LocalOidcProvider } from './oidc/provider';
import { startLocalOidcProvider } from './oidc/provider';
import { localSealer } from './sealing-key';

export const SETTINGS_PAGE_PATH = '/settings';

/** Starts the provider for a settings page served at `apiUrl` (and its `localhost` twin). */
export function startLocalSignIn(options: { readonly apiUrl: string; readonly port: number }): Promise<LocalOidcProvider> {
  const page = `${options.apiUrl}${SETTINGS_PAGE_PATH}`;
  return startLocalOidcProvider({ port: options.port, redirectUris: [page, page.replace('//127.0.0.1:', '//localhost:')] });
}

function routesOf(apiRoutes: readonly ApiRoute[], handler: LambdaHandler, functionName: string, authorizer?: JwtAuthorizer): GatewayRoute[] {
  return apiRoutes.flatMap((route) => route.methods.map((method) => ({ method, path: route.path, handler, functionName, ...(authorizer && { authorizer }) })));
}

/** The settings API and page routes, for `api.setHandler(…, routes)`. */
export function settingsRoutes(options: {
  readonly provider: LocalOidcProvider;
  readonly store: StoreConfig;
  readonly credentials: Credentials | undefined;
  /** Where API_KEY_REVEAL (and the local sealing key's settings) are read; the process's environment by default. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The local timer and webhook queue: a schedule cancelled on the page is disarmed and its webhook sent. */
  readonly scheduling?: LocalParts;
}): GatewayRoute[] {
  const { provider, store, env = process.env } = options;
  const read = new SettingsReader(fromEnv(env));
  const apiKeyReveal = readKeyReveal(read);
  read.finish((message) => new ConfigError(`Invalid configuration: ${message}`));
  const me = createMeHandler(
    createMeDependencies(
      { ...store, oidcIssuer: provider.issuer, oidcUserinfoEndpoint: undefined, apiKeyReveal, apiKeyKmsKeyId: undefined, webhookQueueUrl: undefined, scheduler: undefined },
      { credentials: options.credentials },
      localSealer(env, 'userId'),
      options.scheduling,
    ),
  );
  const page = createSettingsPageHandler({
    config: loadPageConfig({
      OIDC_ISSUER: provider.issuer,
      OIDC_CLIENT_ID: provider.clientId,
      PROBLEM_TYPE_BASE: store.problemTypeBase,
      API_KEY_REVEAL: String(apiKeyReveal),
    }),
    assets: loadAssets(),
    logger: createLogger(),
  });
  const authorizer = createJwtAuthorizer({ issuer: provider.issuer, audience: [provider.clientId], jwksUri: provider.jwksUri });
  return [
    ...routesOf(ME_ROUTES, me as unknown as LambdaHandler, 'email-send-api-me-local', authorizer),
    ...routesOf(SETTINGS_PAGE_ROUTES, page as unknown as LambdaHandler, 'email-send-api-settings-page-local'),
  ];
}
