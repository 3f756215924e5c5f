/**
 * The pages problem `type` URIs point at: one for every problem type the code produces (found in
 * its sources), none for a type it cannot produce, served by the settings page's function at
 * `/problems/<type>`; and the `type` itself, made absolute on the origin the request was sent to.
 */
import { describe, expect, it } from '@jest/globals';
import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { createSettingsPageHandler } from '../../functions/settings-page/handler';
import { PROBLEM_PAGES } from '../../functions/settings-page/problem-pages';
import { problemTypeUri, requestOrigin } from '../../functions/shared/http/middleware/problem-responses';
import { DEFAULTS } from '../../functions/shared/runtime/config';
import { httpApiEvent, lambdaContext } from '../support/events';
import { assertResponseMatchesOpenApi, openApiDocument } from '../support/openapi';
import { problemTypesInCode, settingsProblemTypesInCode } from '../support/problem-types';

const handler = createSettingsPageHandler({
  config: { issuer: 'http://127.0.0.1:9/oidc', clientId: 'c', scope: 'openid email', logoutUrl: undefined, connectOrigins: [], problemTypeBase: DEFAULTS.problemTypeBase, keyReveal: true },
  assets: new Map(),
  logger: new Logger({ serviceName: 'problem-pages-test', logLevel: 'SILENT' }),
});

async function get(path: string, method = 'GET'): Promise<APIGatewayProxyStructuredResultV2 & { body: string }> {
  const result = (await handler(httpApiEvent({ method, path, headers: { 'x-forwarded-proto': 'https' } }), lambdaContext())) as APIGatewayProxyStructuredResultV2 & { body: string };
  assertResponseMatchesOpenApi({ method, path, status: result.statusCode ?? 0, headers: (result.headers ?? {}) as Record<string, string>, body: result.isBase64Encoded ? Buffer.from(result.body, 'base64').toString() : (result.body ?? '') });
  return result;
}

const produced = [...problemTypesInCode(), ...settingsProblemTypesInCode()];

describe('problem type pages', () => {
  it('has a page for every problem type the code produces, and none for a type it does not', () => {
    expect(produced.length).toBeGreaterThan(25);
    const slugs = [...new Set(produced.map(({ slug }) => slug))].sort();
    expect(Object.keys(PROBLEM_PAGES).sort()).toEqual(slugs);
    for (const { status, slug } of produced) expect([slug, PROBLEM_PAGES[slug]!.status.split(', ')]).toEqual([slug, expect.arrayContaining([String(status)])]);
  });

  it.each([...new Set(produced.map(({ slug }) => slug))])('serves /problems/%s as an HTML page naming the problem', async (slug) => {
    const response = await get(`/problems/${slug}`);
    expect([response.statusCode, response.headers?.['Content-Type']]).toEqual([200, 'text/html; charset=utf-8']);
    expect(response.body).toContain(`<h1>${PROBLEM_PAGES[slug]!.title.replace(/'/g, '&#39;')}</h1>`);
    expect(response.body).toContain(`<code>${slug}</code>`);
  });

  it('serves an index at /problems linking every page, relative to where it is served', async () => {
    const response = await get('/problems');
    expect(response.statusCode).toBe(200);
    const links = [...response.body.matchAll(/href="problems\/([a-z-]+)"/g)].map(([, slug]) => slug);
    expect(links.sort()).toEqual(Object.keys(PROBLEM_PAGES).sort());
  });

  it('answers an unknown type, and a name inherited from Object, with the not-found problem', async () => {
    for (const path of ['/problems/no-such-problem', '/problems/constructor', '/problems/validation/x']) {
      const response = await get(path);
      expect(response.statusCode).toBe(404);
      expect(JSON.parse(response.body)).toMatchObject({ type: 'https://localhost/problems/not-found', status: 404 });
    }
  });

  it('answers HEAD exactly as GET (the server leaves the body out); other methods 405 with Allow: GET, HEAD', async () => {
    for (const path of ['/problems', '/problems/validation', '/problems/no-such-problem', '/settings/config.json', '/settings/no-such-file']) {
      const [got, head] = [await get(path), await get(path, 'HEAD')];
      const answer = (response: typeof got) => ({ ...response, headers: { ...response.headers, 'X-Request-Id': typeof response.headers?.['X-Request-Id'] }, body: response.body.replace(/"requestId":"[^"]+"/, '') });
      expect(got.body.length).toBeGreaterThan(0);
      expect(answer(head)).toEqual(answer(got));
    }
    const post = (await handler(httpApiEvent({ method: 'POST', path: '/problems/validation' }), lambdaContext())) as APIGatewayProxyStructuredResultV2;
    expect([post.statusCode, post.headers?.Allow]).toEqual([405, 'GET, HEAD']);
  });

  it('documents both routes in openapi.json', () => {
    expect(Object.keys(openApiDocument.paths)).toEqual(expect.arrayContaining(['/problems', '/problems/{type}']));
    expect([...openApiDocument.paths['/problems/{type}'].get.parameters[0].schema.enum].sort()).toEqual(Object.keys(PROBLEM_PAGES).sort());
  });
});

describe('problemTypeUri', () => {
  it('reads the default base, a path, against the origin the request was sent to', () => {
    expect(DEFAULTS.problemTypeBase).toBe('/problems/');
    expect(problemTypeUri('/problems/', 'validation', 'https://mail.acme.example')).toBe('https://mail.acme.example/problems/validation');
    expect(problemTypeUri('/problems/', 'validation', 'http://127.0.0.1:3000')).toBe('http://127.0.0.1:3000/problems/validation');
  });

  it('keeps a URL base as it is, and a path base as a reference when the origin is unknown', () => {
    expect(problemTypeUri('https://docs.acme.example/errors/', 'validation', 'https://mail.acme.example')).toBe('https://docs.acme.example/errors/validation');
    expect(problemTypeUri('/problems/', 'validation', undefined)).toBe('/problems/validation');
  });

  it('takes the origin from the event: its domain name, and http only when the gateway says so', () => {
    const event = httpApiEvent({ headers: {} });
    expect(requestOrigin(event)).toBe('https://localhost');
    expect(requestOrigin(httpApiEvent({ headers: { 'X-Forwarded-Proto': 'http' } }))).toBe('http://localhost');
    expect(requestOrigin({ ...event, requestContext: { ...event.requestContext, domainName: '' } })).toBeUndefined();
  });
});
