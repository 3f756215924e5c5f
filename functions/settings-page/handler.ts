/**
 * The settings page (`GET /settings` and its files): static files under a strict
 * Content-Security-Policy (no inline script, no framing, connections only to the API and the
 * OpenID provider), and `config.json`, which tells the page where to sign in; and the problem
 * type pages (`/problems/<slug>`) that every problem document's `type` points at. Needs no AWS
 * access at all. Lambda runs it through `index.ts`; the local stack runs this same handler.
 */
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { Logger } from '@aws-lambda-powertools/logger';
import { API_ROUTES, SETTINGS_PAGE_ROUTES } from '../shared/http/api-routes';
import { problemResponses } from '../shared/http/middleware/problem-responses';
import { route } from '../shared/http/middleware/route';
import { NotFoundProblem } from '../shared/http/problems';
import type { Asset } from './assets';
import type { PageConfig } from './config';
import { problemIndexHtml, problemPageHtml } from './problem-pages';

export interface PageDependencies {
  readonly config: PageConfig;
  readonly assets: ReadonlyMap<string, Asset>;
  readonly logger: Logger;
}

export function contentSecurityPolicy(config: PageConfig): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src 'self' ${config.connectOrigins.join(' ')}`.trim(),
    "form-action 'none'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

export function createSettingsPageHandler(deps: PageDependencies) {
  const { config, assets } = deps;
  const headers = {
    'Content-Security-Policy': contentSecurityPolicy(config),
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    // Small files that change with each deployment: revalidated, never served stale.
    'Cache-Control': 'no-cache',
  };
  const configJson: Asset = {
    type: 'application/json',
    body: Buffer.from(JSON.stringify({ issuer: config.issuer, clientId: config.clientId, scope: config.scope, logoutUrl: config.logoutUrl ?? null, keyReveal: config.keyReveal })),
  };

  function problemPage(path: string): APIGatewayProxyStructuredResultV2 {
    const html = path === API_ROUTES.problems.path ? problemIndexHtml() : problemPageHtml(path.slice(API_ROUTES.problems.path.length + 1));
    if (html === undefined) throw new NotFoundProblem(path, 'a problem type page at GET /problems/<type>');
    return { statusCode: 200, headers: { ...headers, 'Content-Type': 'text/html; charset=utf-8' }, body: html };
  }

  return middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, Context>()
    .use(problemResponses({ logger: deps.logger, typeBase: config.problemTypeBase }))
    .use(route({ serves: SETTINGS_PAGE_ROUTES }))
    .handler(async (event) => {
      if (event.rawPath === API_ROUTES.problems.path || event.rawPath.startsWith(`${API_ROUTES.problems.path}/`)) return problemPage(event.rawPath);
      const path = event.rawPath === '/settings' ? '' : event.rawPath.slice('/settings/'.length);
      const asset = path === 'config.json' ? configJson : assets.get(path);
      if (!asset) throw new NotFoundProblem(event.rawPath, 'the settings page at GET /settings');
      return {
        statusCode: 200,
        headers: { ...headers, 'Content-Type': asset.type },
        body: asset.body.toString('base64'),
        isBase64Encoded: true,
      };
    });
}
