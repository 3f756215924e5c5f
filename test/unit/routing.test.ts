/**
 * Routing as an HTTP API does it (the local gateway's `matchRoute`), and the functions' own
 * 404/405 answers from the one route table.
 */
import { describe, expect, it } from '@jest/globals';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type middy from '@middy/core';
import { MethodNotAllowedProblem, NotFoundProblem } from '../../functions/shared/http/problems';
import { route } from '../../functions/shared/http/middleware/route';
import type { GatewayRoute } from '../../infra/local/gateway/routing';
import { matchRoute } from '../../infra/local/gateway/routing';

const fn = async () => undefined;
const routes: GatewayRoute[] = [
  { method: 'GET', path: '/settings/{proxy+}', handler: fn, functionName: 'page-assets' },
  { method: 'GET', path: '/settings/config.json', handler: fn, functionName: 'page-config' },
  { method: 'ANY', path: '/v1.2/me', handler: fn, functionName: 'me-any' },
  { method: 'GET', path: '/v1.2/me', handler: fn, functionName: 'me-get' },
];

describe('matchRoute', () => {
  it('prefers an exact path over a greedy variable, and an exact method over ANY', () => {
    expect(matchRoute(routes, 'GET', '/settings/config.json')?.route.functionName).toBe('page-config');
    expect(matchRoute(routes, 'GET', '/v1.2/me')?.route.functionName).toBe('me-get');
    expect(matchRoute(routes, 'DELETE', '/v1.2/me')?.route.functionName).toBe('me-any');
  });

  it('hands a greedy variable the rest of the path, and needs at least one segment for it', () => {
    expect(matchRoute(routes, 'GET', '/settings/js/app.js')).toMatchObject({
      routeKey: 'GET /settings/{proxy+}',
      pathParameters: { proxy: 'js/app.js' },
    });
    expect(matchRoute(routes, 'GET', '/settings/')).toBeUndefined();
    expect(matchRoute(routes, 'GET', '/settingsx/app.js')).toBeUndefined();
  });

  it('leaves everything else to $default', () => {
    expect(matchRoute(routes, 'POST', '/settings/app.js')).toBeUndefined();
    expect(matchRoute(routes, 'GET', '/v1.2/me/')).toBeUndefined();
  });
});

async function answerOf(method: string, path: string, options: Parameters<typeof route>[0]): Promise<unknown> {
  const event = { rawPath: path, requestContext: { http: { method } } } as unknown as APIGatewayProxyEventV2;
  try {
    await route(options).before!({ event } as middy.Request<APIGatewayProxyEventV2>);
    return 'passed';
  } catch (error) {
    return error;
  }
}

describe('route middleware', () => {
  const own = { path: '/v1.2/email/send', methods: ['POST'] };
  const known = [own, { path: '/v1.2/me/api-key', methods: ['POST', 'DELETE'] }];

  it('passes its own route through', async () => {
    expect(await answerOf('POST', '/v1.2/email/send', { serves: [own] })).toBe('passed');
    const assets = { path: '/settings/{proxy+}', methods: ['GET'] };
    expect(await answerOf('GET', '/settings/app.js', { serves: [assets] })).toBe('passed');
    expect(await answerOf('PUT', '/settings/app.js', { serves: [own], known: [assets] })).toBeInstanceOf(MethodNotAllowedProblem);
  });

  it('answers 405 with Allow for a wrong method on any path the API serves', async () => {
    const own405 = await answerOf('GET', '/v1.2/email/send', { serves: [own], known });
    expect(own405).toBeInstanceOf(MethodNotAllowedProblem);
    expect((own405 as MethodNotAllowedProblem).headers).toEqual({ Allow: 'POST' });
    const other = await answerOf('PUT', '/v1.2/me/api-key', { serves: [own], known });
    expect(other).toBeInstanceOf(MethodNotAllowedProblem);
    expect((other as MethodNotAllowedProblem).headers).toEqual({ Allow: 'POST, DELETE' });
  });

  it('answers 404 for a path no route has, and for another route\'s path when it knows no others', async () => {
    expect(await answerOf('GET', '/v1.2/nothing', { serves: [own], known })).toBeInstanceOf(NotFoundProblem);
    expect(await answerOf('PUT', '/v1.2/me/api-key', { serves: [own] })).toBeInstanceOf(NotFoundProblem);
  });
});
