/**
 * The settings API's read-only view of templates, through the local stack's HTTP API with a
 * signed-in user's access token: `GET /v1.2/me/templates` lists the templates of the user's
 * Organizations only, and `POST /v1.2/me/templates/{Name}/render` previews one as the templates
 * endpoint's render does (values HTML-escaped in HtmlContent only, a missing variable a 400 at its
 * pointer), refusing another Organization's (403, the same answer as an unknown one).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { LOCAL_CLIENT_ID } from '../../infra/local/oidc/provider';
import { signIn } from '../support/oidc';
import type { TestStack } from './helpers';
import { adminEnv, adminJson, startTestStack } from './helpers';

let stack: TestStack;
let env: Record<string, string>;

beforeAll(async () => {
  stack = await startTestStack();
  env = adminEnv(stack);
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

/** A user (signed in) who is a member of a new Organization, with an API key to save templates. */
async function member(name: string): Promise<{ organizationId: string; apiKey: string; token: string }> {
  const email = `${Math.random().toString(36).slice(2)}@users.example.net`;
  const { id: organizationId } = await adminJson(env, 'org', 'create', '--name', name);
  const { id: userId } = await adminJson(env, 'user', 'create', '--email', email);
  await adminJson(env, 'member', 'add', '--org', organizationId, '--user', userId);
  const { key: apiKey } = await adminJson(env, 'key', 'generate', '--user', userId);
  const { accessToken } = await signIn({ issuer: stack.oidcIssuer, clientId: LOCAL_CLIENT_ID, redirectUri: stack.settingsUrl, email });
  return { organizationId, apiKey, token: accessToken };
}

async function put(apiKey: string, organizationId: string, name: string, content: Record<string, string>): Promise<void> {
  const response = await fetch(`${stack.apiUrl}/v1.2/templates/${name}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ OrganizationId: organizationId, ...content }),
  });
  expect(response.status).toBe(201);
}

const me = (token: string, method: string, path: string, body?: unknown) =>
  fetch(`${stack.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });

describe("the settings API's templates", () => {
  it('lists the templates of the user\'s Organizations only, and previews one with the Variables given', async () => {
    const [ada, stranger] = await Promise.all([member('Templates Ada'), member('Templates Stranger')]);
    await put(ada.apiKey, ada.organizationId, 'welcome', { Subject: 'Hello {{name}}', TextContent: 'Hi {{name}}', HtmlContent: '<p>Hi {{name}}</p>' });
    await put(ada.apiKey, ada.organizationId, 'welcome', { Subject: 'Welcome {{name}}', TextContent: 'Hi {{name}}, again', HtmlContent: '<p>Hi {{name}}</p>' });
    await put(stranger.apiKey, stranger.organizationId, 'secret-offer', { Subject: 'Not for Ada', TextContent: 'x' });

    const listed = await me(ada.token, 'GET', '/v1.2/me/templates');
    expect(listed.status).toBe(200);
    const { Templates } = (await listed.json()) as { Templates: Record<string, unknown>[] };
    expect(Templates).toEqual([{ OrganizationId: ada.organizationId, Name: 'welcome', LatestVersion: 2, UpdatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) }]);
    // Naming another Organization is refused as an unknown one is.
    const other = await me(ada.token, 'GET', `/v1.2/me/templates?organizationId=${stranger.organizationId}`);
    expect(other.status).toBe(403);
    expect(((await other.json()) as { type: string }).type).toMatch(/organization-forbidden$/);

    const rendered = await me(ada.token, 'POST', '/v1.2/me/templates/welcome/render', { OrganizationId: ada.organizationId, Variables: { name: 'Ada <3' } });
    expect(rendered.status).toBe(200);
    expect(await rendered.json()).toEqual({ Name: 'welcome', Version: 2, Subject: 'Welcome Ada <3', TextContent: 'Hi Ada <3, again', HtmlContent: '<p>Hi Ada &lt;3</p>' });
    const first = await me(ada.token, 'POST', '/v1.2/me/templates/welcome/render', { OrganizationId: ada.organizationId, Version: 1, Variables: { name: 'Ada' } });
    expect(await first.json()).toMatchObject({ Version: 1, Subject: 'Hello Ada' });
  });

  it('refuses another Organization\'s template, an unknown one, a missing variable and a bad body, each with its problem', async () => {
    const [ada, stranger] = await Promise.all([member('Preview Ada'), member('Preview Stranger')]);
    await put(ada.apiKey, ada.organizationId, 'receipt', { Subject: 'Receipt {{orderId}}', TextContent: 'Total {{total}}' });
    await put(stranger.apiKey, stranger.organizationId, 'receipt', { Subject: 'Theirs', TextContent: 'x' });

    const theirs = await me(ada.token, 'POST', '/v1.2/me/templates/receipt/render', { OrganizationId: stranger.organizationId, Variables: {} });
    expect(theirs.status).toBe(403);
    expect(await theirs.text()).not.toContain('Theirs');

    const unknown = await me(ada.token, 'POST', '/v1.2/me/templates/nothing/render', { OrganizationId: ada.organizationId, Variables: {} });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { type: string }).type).toMatch(/template-not-found$/);

    const missing = await me(ada.token, 'POST', '/v1.2/me/templates/receipt/render', { OrganizationId: ada.organizationId, Variables: { total: '9' } });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { errors: unknown[] }).errors).toEqual([{ pointer: '/Variables/orderId', detail: expect.stringContaining('does not give it') }]);

    const malformed = await me(ada.token, 'POST', '/v1.2/me/templates/receipt/render', '{"OrganizationId": ');
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { type: string }).type).toMatch(/malformed-json$/);

    const badFields = await me(ada.token, 'POST', '/v1.2/me/templates/bad%20name/render', { OrganizationId: ada.organizationId, Variables: [], Extra: 1 });
    expect(badFields.status).toBe(400);
    const pointers = ((await badFields.json()) as { errors: { pointer: string }[] }).errors.map((error) => error.pointer).sort();
    expect(pointers).toEqual(['', '/Extra', '/Variables']);
  });
});
