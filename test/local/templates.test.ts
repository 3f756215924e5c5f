/**
 * Templates through the HTTP API on the local stack (CONTRACT section 14): saving makes numbered
 * immutable versions, render previews without sending, a batch with different variables, with an
 * attachment, a scheduled message keeps the version it was accepted with, another Organization can
 * neither read nor use one, and every bad input is a 400 (or 404) with nothing stored or sent.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestStack, Tenant } from './helpers';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkedFetch } from '../support/openapi';
import { admin, adminEnv, adminJson, expectProblem, cancelAndHear, hookedTenant, inAbout, provisionTenant, send, sentEmails, startTestStack } from './helpers';

let stack: TestStack;
let tenant: Tenant;
let other: Tenant;
let env: Record<string, string>;

beforeAll(async () => {
  stack = await startTestStack();
  env = adminEnv(stack);
  [tenant, other] = [await provisionTenant(env), await provisionTenant(env)];
});
afterAll(async () => stack?.stop());

const unique = (tag: string) => `${tag}-${Math.random().toString(36).slice(2, 10)}`;

function call(method: string, path: string, who: Tenant, body?: unknown): Promise<Response> {
  return fetch(`${stack.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${who.apiKey}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
}

const put = (who: Tenant, name: string, fields: Record<string, unknown>) => call('PUT', `/v1.2/templates/${name}`, who, { OrganizationId: who.organizationId, ...fields });
const get = (who: Tenant, name: string, query = '') => call('GET', `/v1.2/templates/${name}?organizationId=${who.organizationId}${query}`, who);
const render = (who: Tenant, name: string, fields: Record<string, unknown>) => call('POST', `/v1.2/templates/${name}/render`, who, { OrganizationId: who.organizationId, ...fields });

async function saved(who: Tenant, name: string, fields: Record<string, unknown>): Promise<number> {
  const response = await put(who, name, fields);
  const body = (await response.json()) as Record<string, any>;
  expect(response.status).toBe(201);
  expect(body).toEqual({ Name: name, Version: expect.any(Number), CreatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
  return body.Version as number;
}

const emailsWith = async (subject: string) => (await sentEmails(stack.sesUrl)).filter((email) => email.subject === subject);

describe('template versions', () => {
  it('numbers each save, keeps old versions readable, lists the latest and deletes', async () => {
    const name = unique('welcome');
    expect(await saved(tenant, name, { Subject: 'Hello {{name}}', TextContent: 'v1 {{name}}' })).toBe(1);
    expect(await saved(tenant, name, { Subject: 'Hi {{name}}', HtmlContent: '<p>v2 {{name}}</p>' })).toBe(2);

    const latest = (await (await get(tenant, name)).json()) as Record<string, any>;
    expect(latest).toMatchObject({ Name: name, Version: 2, Subject: 'Hi {{name}}', HtmlContent: '<p>v2 {{name}}</p>' });
    expect(latest.TextContent).toBeUndefined();
    const first = (await (await get(tenant, name, '&version=1')).json()) as Record<string, any>;
    expect(first).toMatchObject({ Version: 1, Subject: 'Hello {{name}}', TextContent: 'v1 {{name}}' });
    await expectProblem(await get(tenant, name, '&version=3'), 404);

    const list = (await (await call('GET', `/v1.2/templates?organizationId=${tenant.organizationId}`, tenant)).json()) as { Templates: Record<string, any>[] };
    expect(list.Templates).toContainEqual({ Name: name, LatestVersion: 2, UpdatedAt: expect.any(String) });

    // A DELETE removes every version: asked for one, it refuses rather than delete them all.
    const one = await expectProblem(await call('DELETE', `/v1.2/templates/${name}?organizationId=${tenant.organizationId}&version=1`, tenant), 400);
    expect(one.errors).toEqual([{ pointer: '/version', detail: expect.stringContaining('DELETE removes every version') }]);
    expect((await get(tenant, name, '&version=1')).status).toBe(200);
    const deleted = await call('DELETE', `/v1.2/templates/${name}?organizationId=${tenant.organizationId}`, tenant);
    expect(deleted.status).toBe(204);
    await expectProblem(await get(tenant, name), 404);
    await expectProblem(await get(tenant, name, '&version=1'), 404);
    await expectProblem(await call('DELETE', `/v1.2/templates/${name}?organizationId=${tenant.organizationId}`, tenant), 404);
  });

  it('renders a version without sending anything, escaping values in HtmlContent only', async () => {
    const name = unique('preview');
    await saved(tenant, name, { Subject: 'For {{who}}', TextContent: 'Text {{who}}', HtmlContent: '<b>{{who}}</b>{{#each items}}<i>{{this}}</i>{{/each}}' });
    const before = (await sentEmails(stack.sesUrl)).length;
    const response = await render(tenant, name, { Variables: { who: 'Tom & <Jerry>', items: ['a', 'b'] } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      Name: name,
      Version: 1,
      Subject: 'For Tom & <Jerry>',
      TextContent: 'Text Tom & <Jerry>',
      HtmlContent: '<b>Tom &amp; &lt;Jerry&gt;</b><i>a</i><i>b</i>',
    });
    expect((await sentEmails(stack.sesUrl)).length).toBe(before);
  });
});

describe('sending with a template', () => {
  it('sends a batch with different variables and an attachment, each from the version it names', async () => {
    const name = unique('receipt');
    await saved(tenant, name, { Subject: 'Receipt {{order.id}}', TextContent: 'Dear {{order.name}}' });
    await saved(tenant, name, { Subject: 'Receipt v2 {{order.id}}', TextContent: 'Hello {{order.name}}' });
    const tag = unique('o');
    const response = await send(stack, tenant.apiKey, {
      OrganizationId: tenant.organizationId,
      Messages: [
        { From: 'noreply@example.com', To: ['a@example.org'], Template: { Name: name, Variables: { order: { id: `${tag}-1`, name: 'Ann' } } } },
        {
          From: 'noreply@example.com',
          To: ['b@example.org'],
          Template: { Name: name, Version: 1, Variables: { order: { id: `${tag}-2`, name: 'Bob' } } },
          Attachments: [{ FileName: 'receipt.txt', Content: Buffer.from('paid').toString('base64') }],
        },
      ],
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { Messages: Record<string, any>[] };
    expect(body.Messages.map((m) => m.Status)).toEqual(['Sent', 'Sent']);
    const [first] = await emailsWith(`Receipt v2 ${tag}-1`);
    expect(first?.body.text).toBe('Hello Ann');
    const [second] = await emailsWith(`Receipt ${tag}-2`);
    expect(second?.body.text).toContain('Dear Bob');
    // The mail viewer shows which version each came from.
    expect((first as unknown as Record<string, unknown>).template).toEqual({ name, version: 2 });
    expect((second as unknown as Record<string, unknown>).template).toEqual({ name, version: 1 });

    // So does the status answer, once SES's first event is recorded.
    const ids = body.Messages.map((m) => m.MessageId as string);
    const end = Date.now() + 6_000;
    let statuses: Record<string, any>[] = [];
    while (Date.now() < end) {
      const answer = await fetch(stack.statusUrl, { method: 'POST', headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ OrganizationId: tenant.organizationId, MessageIds: ids }) });
      statuses = ((await answer.json()) as { Messages: Record<string, any>[] }).Messages;
      if (statuses.every((m) => m.Status !== 'Unknown')) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(statuses.map((m) => m.Template)).toEqual([{ Name: name, Version: 2 }, { Name: name, Version: 1 }]);
  });

  it('refuses a deleted template at once, and sends one made again under the same name with its own text', async () => {
    const name = unique('remade');
    const tag = unique('r');
    const message = (to: string, version?: number) => ({
      OrganizationId: tenant.organizationId,
      Messages: [{ From: 'noreply@example.com', To: [to], Template: { Name: name, ...(version !== undefined && { Version: version }), Variables: { tag } } }],
    });
    expect(await saved(tenant, name, { Subject: 'Old {{tag}}', TextContent: 'old text' })).toBe(1);
    // Sent once with each form, so whatever an instance keeps of version 1 is there.
    for (const version of [1, undefined]) expect((await send(stack, tenant.apiKey, message('first@example.org', version))).status).toBe(200);
    expect((await render(tenant, name, { Variables: { tag } })).status).toBe(200);
    expect((await call('DELETE', `/v1.2/templates/${name}?organizationId=${tenant.organizationId}`, tenant)).status).toBe(204);

    const before = (await sentEmails(stack.sesUrl)).length;
    for (const [version, pointer] of [[1, '/Messages/0/Template/Version'], [undefined, '/Messages/0/Template/Name']] as const) {
      const problem = await expectProblem(await send(stack, tenant.apiKey, message('deleted@example.org', version)), 400);
      expect(problem.errors.map((e: { pointer: string }) => e.pointer)).toEqual([pointer]);
    }
    expect((await sentEmails(stack.sesUrl)).length).toBe(before);

    // Made again, it is version 1 again, with the new text in every use of it.
    expect(await saved(tenant, name, { Subject: 'New {{tag}}', TextContent: 'new text' })).toBe(1);
    for (const version of [1, undefined]) expect((await send(stack, tenant.apiKey, message('second@example.org', version))).status).toBe(200);
    expect(await emailsWith(`Old ${tag}`)).toHaveLength(2);
    expect((await emailsWith(`New ${tag}`)).map((email) => email.body.text)).toEqual(['new text', 'new text']);
    expect(await (await render(tenant, name, { Variables: { tag } })).json()).toMatchObject({ Subject: `New ${tag}`, TextContent: 'new text' });
  });

  it('replays a finished templated request after its template was deleted or saved anew, instead of rendering it again', async () => {
    const name = unique('replayed');
    await saved(tenant, name, { Subject: 'Replay {{x}}', TextContent: 'body' });
    const body = { OrganizationId: tenant.organizationId, Messages: [{ From: 'noreply@example.com', To: ['r@example.org'], Template: { Name: name, Variables: { x: unique('v') } } }] };
    const key = { 'Idempotency-Key': unique('key') };
    const first = await send(stack, tenant.apiKey, body, key);
    expect(first.status).toBe(200);
    const answer = await first.text();
    await saved(tenant, name, { Subject: 'Now {{x}} and {{y}}', TextContent: 'body' });
    const afterSave = await send(stack, tenant.apiKey, body, key);
    expect([afterSave.status, afterSave.headers.get('idempotent-replayed'), await afterSave.text()]).toEqual([200, 'true', answer]);
    expect((await call('DELETE', `/v1.2/templates/${name}?organizationId=${tenant.organizationId}`, tenant)).status).toBe(204);
    const afterDelete = await send(stack, tenant.apiKey, body, key);
    expect([afterDelete.status, afterDelete.headers.get('idempotent-replayed'), await afterDelete.text()]).toEqual([200, 'true', answer]);
    // A new request with the same body is refused as before: the template is gone.
    expect((await send(stack, tenant.apiKey, body)).status).toBe(400);
  });

  it('fixes the version when a scheduled message is accepted, even if the template changes before it fires', async () => {
    const name = unique('later');
    await saved(tenant, name, { Subject: 'Old {{x}}', TextContent: 'old body' });
    const tag = unique('s');
    const at = Math.ceil((Date.now() + 1_500) / 1_000) * 1_000;
    const response = await send(stack, tenant.apiKey, {
      OrganizationId: tenant.organizationId,
      Messages: [{ From: 'noreply@example.com', To: ['c@example.org'], SendAt: new Date(at).toISOString().slice(0, 19).replace('T', ' '), Template: { Name: name, Variables: { x: tag } } }],
    });
    expect(response.status).toBe(200);
    const accepted = ((await response.json()) as { Messages: Record<string, any>[] }).Messages[0];
    expect(accepted?.Status).toBe('Scheduled');
    const scheduleId = accepted?.ScheduleId as string;
    await saved(tenant, name, { Subject: 'New {{x}}', TextContent: 'new body' });
    const deleted = await call('DELETE', `/v1.2/templates/${name}?organizationId=${tenant.organizationId}`, tenant);
    expect(deleted.status).toBe(204);

    const end = Date.now() + 6_000;
    while ((await emailsWith(`Old ${tag}`)).length === 0 && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await emailsWith(`Old ${tag}`)).toHaveLength(1);
    expect(await emailsWith(`New ${tag}`)).toHaveLength(0);

    // Its status, once sent, names the version it was rendered from, as the document says.
    const status = await checkedFetch(stack.statusUrl, { method: 'POST', headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ OrganizationId: tenant.organizationId, ScheduleIds: [scheduleId] }) });
    expect(((await status.json()) as { Messages: Record<string, any>[] }).Messages[0]).toMatchObject({ ScheduleId: scheduleId, Status: expect.not.stringMatching(/^(Scheduled|Unknown)$/), Template: { Name: name, Version: 1 } });
  });

  it('names the version of a scheduled message from the start: its status while it waits and once cancelled, and its schedule webhooks', async () => {
    const hooked = await hookedTenant(stack, env, 'Templated');
    try {
      const name = unique('waiting');
      await saved(hooked.tenant, name, { Subject: 'Hi {{x}}', TextContent: 'body' });
      const version = await saved(hooked.tenant, name, { Subject: 'Hello {{x}}', TextContent: 'body' });
      const response = await send(stack, hooked.tenant.apiKey, {
        OrganizationId: hooked.tenant.organizationId,
        Messages: [{ From: 'noreply@example.com', To: ['c@example.org'], SendAt: inAbout(600_000).text, Template: { Name: name, Variables: { x: 'y' } } }],
      });
      const scheduleId = ((await response.json()) as { Messages: Record<string, any>[] }).Messages[0]?.ScheduleId as string;
      const template = { Name: name, Version: version };
      const statusOf = async () => {
        const answer = await checkedFetch(stack.statusUrl, { method: 'POST', headers: { authorization: `Bearer ${hooked.tenant.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ OrganizationId: hooked.tenant.organizationId, ScheduleIds: [scheduleId] }) });
        return ((await answer.json()) as { Messages: Record<string, any>[] }).Messages[0];
      };
      expect(await statusOf()).toMatchObject({ ScheduleId: scheduleId, Status: 'Scheduled', Template: template });
      const told = await cancelAndHear(stack, hooked, hooked.tenant.apiKey, scheduleId);
      expect(await statusOf()).toMatchObject({ Status: 'Cancelled', Template: template });
      expect(told.map((e) => [e.type, e.data.Template])).toEqual([
        ['email.scheduled', template],
        ['email.cancelled', template],
      ]);
    } finally {
      hooked.close();
    }
  });
});

describe('Organizations are isolated', () => {
  it('another Organization can neither read, list, render, delete nor send with a template', async () => {
    const name = unique('private');
    await saved(tenant, name, { Subject: 'Secret', TextContent: 'secret' });
    // Naming the owner's Organization: not a member, 403 as elsewhere.
    const asOwner = { ...other, organizationId: tenant.organizationId };
    await expectProblem(await get(asOwner, name), 403);
    await expectProblem(await render(asOwner, name, { Variables: {} }), 403);
    await expectProblem(await call('DELETE', `/v1.2/templates/${name}?organizationId=${tenant.organizationId}`, other), 403);
    // In its own Organization the name means nothing.
    await expectProblem(await get(other, name), 404);
    expect(((await (await call('GET', `/v1.2/templates?organizationId=${other.organizationId}`, other)).json()) as { Templates: unknown[] }).Templates).toEqual([]);
    const sent = await send(stack, other.apiKey, { OrganizationId: other.organizationId, Messages: [{ From: 'noreply@example.com', To: ['d@example.org'], Template: { Name: name, Variables: {} } }] });
    const problem = await expectProblem(sent, 400);
    expect(problem.errors).toEqual([{ pointer: '/Messages/0/Template/Name', detail: expect.stringContaining('no template') }]);
  });
});

describe('bad input: a clear 400, nothing stored or sent', () => {
  it('refuses a template that does not compile, naming the field and the line', async () => {
    const name = unique('broken');
    const problem = await expectProblem(await put(tenant, name, { Subject: 'ok', HtmlContent: '<p>\n{{#if x}}\nno end' }), 400);
    expect(problem.errors).toEqual([{ pointer: '/HtmlContent', detail: expect.stringMatching(/^line 3: not valid Handlebars/) }]);
    await expectProblem(await get(tenant, name), 404);
  });

  it.each([
    ['a partial', '{{> footer}}'],
    ['a helper', '{{lookup a "b"}}'],
    ['triple braces', '{{{raw}}}'],
    ['prototype access', '{{constructor.name}}'],
    ['a block outside the subset', '{{#with a}}{{b}}{{/with}}'],
  ])('refuses %s', async (_what, source) => {
    const name = unique('unsafe');
    const problem = await expectProblem(await put(tenant, name, { Subject: 'ok', TextContent: `first line\n${source}` }), 400);
    expect(problem.errors[0]).toEqual({ pointer: '/TextContent', detail: expect.stringMatching(/^line 2: /) });
    await expectProblem(await get(tenant, name), 404);
  });

  it('refuses an oversized template', async () => {
    const problem = await expectProblem(await put(tenant, unique('big'), { Subject: 'big', TextContent: 'x'.repeat(512 * 1024) }), 400);
    expect(problem.errors[0].detail).toMatch(/at most 524288/);
  });

  it('refuses a bad name, a missing body and Variables that are not an object', async () => {
    await expectProblem(await put(tenant, 'bad.name', { Subject: 's', TextContent: 't' }), 400);
    const missing = await expectProblem(await put(tenant, unique('empty'), { Subject: 's' }), 400);
    expect(missing.errors).toEqual([{ pointer: '/TextContent', detail: expect.any(String) }]);
    const name = unique('vars');
    await saved(tenant, name, { Subject: 's {{a}}', TextContent: 't' });
    const notObject = await expectProblem(await render(tenant, name, { Variables: [1] }), 400);
    expect(notObject.errors).toEqual([{ pointer: '/Variables', detail: expect.stringContaining('JSON object') }]);
  });

  it('refuses a whole batch when one message lacks a variable, an unknown version, or gives both a Template and a Subject', async () => {
    const name = unique('strict');
    await saved(tenant, name, { Subject: 'Hi {{user.first}}', TextContent: '{{#each lines}}{{text}}{{/each}}' });
    const subject = unique('never');
    const message = (extra: Record<string, unknown>) => ({ From: 'noreply@example.com', To: ['e@example.org'], ...extra });
    const response = await send(stack, tenant.apiKey, {
      OrganizationId: tenant.organizationId,
      Messages: [
        message({ Subject: subject, TextContent: 'written' }),
        message({ Template: { Name: name, Variables: { user: {}, lines: [{ text: 'a' }, {}] } } }),
        message({ Template: { Name: name, Version: 9, Variables: {} } }),
        message({ Subject: 'x', Template: { Name: name, Variables: {} } }),
        message({ Template: { Name: name, Variables: 'no' } }),
        message({ Template: { Name: name, Variables: { user: { first: 'a\r\nBcc: x@evil.example' }, lines: [] } } }),
      ],
    });
    const problem = await expectProblem(response, 400);
    const pointers = (problem.errors as { pointer: string }[]).map((error) => error.pointer);
    expect(pointers).toEqual(expect.arrayContaining([
      '/Messages/3/Subject',
      '/Messages/4/Template/Variables',
    ]));
    expect(await emailsWith(subject)).toHaveLength(0);

    // With the shape right, the rendering problems of every message are listed together.
    const rendered = await send(stack, tenant.apiKey, {
      OrganizationId: tenant.organizationId,
      Messages: [
        message({ Subject: subject, TextContent: 'written' }),
        message({ Template: { Name: name, Variables: { user: {}, lines: [{ text: 'a' }, {}] } } }),
        message({ Template: { Name: name, Version: 9, Variables: {} } }),
        message({ Template: { Name: name, Variables: { user: { first: 'a\r\nBcc: x@evil.example' }, lines: [{ text: 'x' }] } } }),
        message({ Template: { Name: name, Variables: { user: { first: 'Ann' }, lines: [] } } }),
        message({ Template: { Name: name, Variables: { user: 'Ann', lines: [] } } }),
        message({ Template: { Name: name, Variables: { user: { first: { given: 'Ann' } }, lines: [] } } }),
      ],
    });
    const renderProblem = await expectProblem(rendered, 400);
    expect(renderProblem.errors).toEqual([
      { pointer: '/Messages/1/Template/Variables/lines/1/text', detail: expect.any(String) },
      { pointer: '/Messages/1/Template/Variables/user/first', detail: expect.any(String) },
      { pointer: '/Messages/2/Template/Version', detail: expect.stringContaining('no version 9') },
      { pointer: '/Messages/3/Template', detail: expect.stringContaining('control characters') },
      { pointer: '/Messages/4/Template', detail: expect.stringContaining('TextContent and HtmlContent are both empty') },
      // A name read inside a variable that is not an object: that variable, in plain words.
      { pointer: '/Messages/5/Template/Variables/user', detail: 'the template reads names inside this variable ({{user.…}}), so it must be an object; it is a string' },
      // An object where the template prints a value: no "[object Object]" in anyone's mail.
      { pointer: '/Messages/6/Template/Variables/user/first', detail: 'the template puts this variable in the message ({{user.first}}), so it must be a string, number or boolean; it is an object' },
    ]);
    expect(await emailsWith(subject)).toHaveLength(0);
  });
});

describe('admin CLI: template put/list/show/delete', () => {
  it('saves versions from files, lists, shows a version, refuses a bad template by line, and deletes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'templates-'));
    try {
      const name = unique('cli');
      const [text, html, bad] = [join(dir, 'body.txt'), join(dir, 'body.html'), join(dir, 'bad.html')];
      await writeFile(text, 'Hello {{name}}');
      await writeFile(html, '<p>Hello {{name}}</p>');
      await writeFile(bad, '<p>\n{{> footer}}</p>');
      const org = tenant.organizationId;
      expect(await adminJson(env, 'template', 'put', '--org', org, '--name', name, '--subject', 'Hi {{name}}', '--text-file', text)).toMatchObject({ name, version: 1 });
      expect(await adminJson(env, 'template', 'put', '--org', org, '--name', name, '--subject', 'Hey {{name}}', '--html-file', html)).toMatchObject({ name, version: 2 });
      const refused = await admin(env, 'template', 'put', '--org', org, '--name', name, '--subject', 'x', '--html-file', bad);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/HtmlContent: line 2: partials/);

      expect((await adminJson(env, 'template', 'list', '--org', org)).templates).toContainEqual({ name, latestVersion: 2, updatedAt: expect.any(String) });
      expect(await adminJson(env, 'template', 'show', '--org', org, '--name', name, '--version', '1')).toMatchObject({ version: 1, subject: 'Hi {{name}}', textContent: 'Hello {{name}}', htmlContent: null });
      // What the CLI saved, the API renders.
      const rendered = (await (await render(tenant, name, { Variables: { name: '<Ann>' } })).json()) as Record<string, any>;
      expect(rendered).toMatchObject({ Version: 2, Subject: 'Hey <Ann>', HtmlContent: '<p>Hello &lt;Ann&gt;</p>' });

      expect(await adminJson(env, 'template', 'delete', '--org', org, '--name', name)).toEqual({ name, deleted: true });
      expect((await admin(env, 'template', 'show', '--org', org, '--name', name)).code).toBe(3);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
