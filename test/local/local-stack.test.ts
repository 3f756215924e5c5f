/**
 * The local stack as a newcomer meets it: started in-process on free ports, provisioned through
 * the admin CLI's own code path, called over real HTTP, and checked against what reached the SES
 * emulator. Every status of the contract that HTTP alone can produce. Requests a client generated
 * from openapi.json can make go through the typed client (`clientOf`), so the document and these
 * calls type-check together; deliberately malformed ones use plain `fetch` (`send`).
 */
import { execFile } from 'node:child_process';
import { request } from 'node:http';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { QUICKSTART_CURL } from '../../infra/local/seed';
import type { ApiClient } from '../support/api-client';
import { checkedFetch } from '../support/openapi';
import { withLastCharChanged } from '../support/tamper';
import type { Tenant, TestStack } from './helpers';
import {
  admin,
  adminEnv,
  adminJson,
  clearEmails,
  clientOf,
  expectClientProblem,
  expectProblem,
  messageBody,
  provisionTenant,
  send,
  sentEmails,
  startTestStack,
} from './helpers';

const run = promisify(execFile);

let stack: TestStack;
let env: Record<string, string>;
let tenant: Tenant;
/** The tenant's typed client. */
let api: ApiClient;

beforeAll(async () => {
  stack = await startTestStack();
  env = adminEnv(stack);
  tenant = await provisionTenant(env, ['example.com', 'billing@acme.test']);
  api = clientOf(stack, tenant.apiKey);
});

/** POST /v1.2/email/send through a typed client. */
const sendTyped = (client: ApiClient, body: ReturnType<typeof messageBody>, headers: Record<string, string> = {}) =>
  client.POST('/v1.2/email/send', { body, headers });
afterAll(async () => stack.stop());
beforeEach(async () => clearEmails(stack.sesUrl));

describe('startLocalStack', () => {
  it('answers GET / with an index naming the endpoint and the mail viewer, for readiness checks', async () => {
    const response = await fetch(`${stack.apiUrl}/`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      ready: true,
      endpoints: [
        { method: 'POST', url: `${stack.apiUrl}/v1.2/email/send` },
        { method: 'POST', url: `${stack.apiUrl}/v1.2/email/status` },
        { method: 'POST', url: `${stack.apiUrl}/v1.2/email/cancel` },
        { method: 'GET', url: `${stack.apiUrl}/v1.2/templates` },
      ],
      mailViewer: stack.viewerUrl,
    });
  });

  it('serves the mail viewer at the SES emulator root', async () => {
    const response = await fetch(stack.viewerUrl!);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('gives export lines with which the quickstart\'s curl, as printed, sends the demo message', async () => {
    expect(stack.demo?.status).toBe('created');
    expect(stack.demo!.exports.split('\n')).toEqual([`export BASE_URL=${stack.apiUrl}`, `export API_KEY=${stack.demo!.apiKey}`, `export ORGANIZATION_ID=${stack.demo!.organizationId}`]);
    // A clean environment: only what the export lines set, as in a new shell.
    const { stdout } = await run('sh', ['-c', `${stack.demo!.exports}\n${QUICKSTART_CURL}`], { timeout: 10_000, env: { PATH: process.env.PATH! } });
    const result = JSON.parse(stdout);
    expect(result).toMatchObject({ OrganizationId: stack.demo!.organizationId, Messages: [{ Index: 0, Status: 'Sent' }] });
    const emails = await sentEmails(stack.sesUrl);
    expect(emails).toHaveLength(1);
    expect(emails[0]).toMatchObject({
      messageId: result.Messages[0].MessageId,
      from: 'hello@example.com',
      destination: { to: ['you@example.org'] },
      subject: 'Hello from the local stack',
    });
  });

  it('never writes an API key to its log', async () => {
    await sendTyped(api, messageBody(tenant.organizationId));
    await sendTyped(clientOf(stack, 'tme_not-a-real-key'), messageBody(tenant.organizationId));
    expect(stack.logs.some((line) => line.includes('POST /v1.2/email/send 200'))).toBe(true);
    expect(stack.logs.join('\n')).not.toMatch(/tme_/);
  });

  it('neither logs nor echoes a key a client put where no key belongs: the URL, a template name, an id to look up or cancel', async () => {
    const key = tenant.apiKey;
    const asTemplateName = await fetch(`${stack.apiUrl}/v1.2/templates/${key}?organizationId=${tenant.organizationId}`, { headers: { Authorization: `Bearer ${key}` } });
    const asPath = await fetch(`${stack.apiUrl}/${key}`);
    expect([asTemplateName.status, asPath.status]).toEqual([404, 404]);
    const bodies = [await asTemplateName.text(), await asPath.text()];
    for (const body of bodies) expect(body).toContain('[redacted API key]');
    expect(stack.logs.some((line) => line.startsWith('GET /[redacted API key] 404'))).toBe(true);
    // Sent as the id to look up or cancel: answered Unknown, under the redacted id.
    const asIds = await Promise.all([
      fetch(`${stack.apiUrl}/v1.2/email/status`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ OrganizationId: tenant.organizationId, MessageIds: [key] }) }),
      fetch(`${stack.apiUrl}/v1.2/email/cancel`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ OrganizationId: tenant.organizationId, ScheduleIds: [key] }) }),
    ]);
    const [status, cancel] = (await Promise.all(asIds.map((response) => response.json()))) as { Messages: Record<string, unknown>[] }[];
    expect([status!.Messages[0], cancel!.Messages[0]]).toEqual([
      expect.objectContaining({ MessageId: '[redacted API key]', Status: 'Unknown' }),
      { ScheduleId: '[redacted API key]', Status: 'Unknown' },
    ]);
    for (const text of [...bodies, JSON.stringify([status, cancel]), stack.logs.join('\n')]) expect(text).not.toContain(key.slice(4, 20));
  });
});

describe('POST /v1.2/email/send over HTTP', () => {
  it('sends the message: 200 with the SES message id, and the email is in the emulator', async () => {
    const { data, response } = await sendTyped(api, messageBody(tenant.organizationId, { Cc: ['carol@example.org'], HtmlContent: '<p>Thanks</p>' }));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const emails = await sentEmails(stack.sesUrl);
    expect(emails).toHaveLength(1);
    expect(data).toEqual({ OrganizationId: tenant.organizationId, Messages: [{ Index: 0, Status: 'Sent', MessageId: emails[0]!.messageId }] });
    expect(emails[0]).toMatchObject({
      from: 'noreply@example.com',
      destination: { to: ['alice@example.org'], cc: ['carol@example.org'], bcc: [] },
      subject: 'Your receipt',
      body: { text: 'Thanks for your order.', html: '<p>Thanks</p>' },
    });
  });

  it('accepts an exact sender address identity and a charset parameter', async () => {
    const { response } = await sendTyped(api, messageBody(tenant.organizationId, { From: 'billing@acme.test' }), {
      'Content-Type': 'application/json; charset=utf-8',
    });
    expect(response.status).toBe(200);
    expect((await sentEmails(stack.sesUrl)).map((e) => e.from)).toEqual(['billing@acme.test']);
  });

  it('400: lists every problem with its JSON pointer and sends nothing', async () => {
    const body = messageBody(tenant.organizationId, { To: ['not-an-address'], Subject: '' });
    const problem = expectClientProblem(await sendTyped(api, body), 400);
    const pointers = (problem.errors as { pointer: string }[]).map((e) => e.pointer);
    expect(pointers).toEqual(expect.arrayContaining(['/Messages/0/To/0', '/Messages/0/Subject']));
    expect(await sentEmails(stack.sesUrl)).toHaveLength(0);
  });

  it('400: a body that is not JSON', async () => {
    await expectProblem(await send(stack, tenant.apiKey, '{"OrganizationId":'), 400);
  });

  it('gives each problem a type URI on its own origin whose page explains it, for the handler\'s problems and the gateway\'s', async () => {
    const fromHandler = await expectProblem(await send(stack, tenant.apiKey, '{"OrganizationId":'), 400);
    const fromGateway = await expectProblem(await fetch(`${stack.apiUrl}/docs`, { method: 'DELETE' }), 405);
    for (const problem of [fromHandler, fromGateway]) {
      expect(problem.type).toMatch(new RegExp(`^${stack.apiUrl}/problems/[a-z-]+$`));
      const page = await fetch(problem.type);
      expect([page.status, page.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
      expect(await page.text()).toContain(`<h1>${problem.title}</h1>`);
    }
  });

  it('401 without credentials, with WWW-Authenticate naming the Bearer realm', async () => {
    const answer = await sendTyped(clientOf(stack), messageBody(tenant.organizationId));
    expectClientProblem(answer, 401);
    expect(answer.response.headers.get('www-authenticate')).toMatch(/^Bearer realm="[^"]+"$/);
  });

  it('401 with an unknown key or another scheme, with error="invalid_token", and the key is not echoed', async () => {
    const unknown = await sendTyped(clientOf(stack, withLastCharChanged(tenant.apiKey)), messageBody(tenant.organizationId));
    expect(JSON.stringify(expectClientProblem(unknown, 401))).not.toContain(tenant.apiKey.slice(4, 20));
    expect(unknown.response.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');

    const basic = await sendTyped(clientOf(stack), messageBody(tenant.organizationId), { Authorization: `Basic ${tenant.apiKey}` });
    expectClientProblem(basic, 401);
    expect(basic.response.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect(await sentEmails(stack.sesUrl)).toHaveLength(0);
  });

  it('403 alike for an Organization the caller is not in and one that does not exist', async () => {
    const { id: other } = await adminJson(env, 'org', 'create', '--name', 'Other');
    const notMember = expectClientProblem(await sendTyped(api, messageBody(other)), 403);
    const unknown = expectClientProblem(await sendTyped(api, messageBody('00000000-0000-4000-8000-000000000000')), 403);
    expect({ ...unknown, requestId: undefined }).toEqual({ ...notMember, requestId: undefined });
    expect(await sentEmails(stack.sesUrl)).toHaveLength(0);
  });

  it('403 for a From outside the sender identities, naming the message, nothing sent', async () => {
    const [allowed] = messageBody(tenant.organizationId).Messages;
    const body = { OrganizationId: tenant.organizationId, Messages: [allowed!, { ...allowed!, From: 'ceo@elsewhere.test' }] };
    const problem = expectClientProblem(await sendTyped(api, body), 403);
    expect(problem.errors).toEqual([expect.objectContaining({ pointer: '/Messages/1/From' })]);
    expect(await sentEmails(stack.sesUrl)).toHaveLength(0);
  });

  it('404 for an unknown path', async () => {
    await expectProblem(await fetch(`${stack.apiUrl}/v1.2/email/sned`, { method: 'POST' }), 404);
    await expectProblem(await fetch(`${stack.apiUrl}/v1.2/email/send/extra`), 404);
  });

  it('405 with Allow: POST for other methods on the path, HEAD included', async () => {
    for (const answer of [await api.GET('/v1.2/email/send'), await api.PUT('/v1.2/email/send'), await api.DELETE('/v1.2/email/send')]) {
      expectClientProblem(answer, 405);
      expect(answer.response.headers.get('allow')).toBe('POST');
    }
    // HEAD: the same refusal in headers only, as the document says.
    const head = await api.HEAD('/v1.2/email/send');
    expect([head.response.status, head.response.headers.get('allow'), await head.response.text()]).toEqual([405, 'POST', '']);
  });

  it('405 with Allow naming what the path serves for a method other paths do not list, as openapi.json says of them all', async () => {
    for (const [method, path, allow] of [
      ['POST', '/v1.2/me', 'GET'],
      ['HEAD', '/v1.2/me/suppressions', 'GET, DELETE'],
      ['PUT', '/v1.2/me/api-key', 'GET, POST, DELETE'],
      ['POST', '/v1.2/templates', 'GET'],
      ['PATCH', '/v1.2/templates/welcome', 'GET, PUT, DELETE'],
      ['DELETE', '/settings', 'GET, HEAD'],
      ['POST', '/problems/validation', 'GET, HEAD'],
    ] as const) {
      const response = await checkedFetch(`${stack.apiUrl}${path}`, { method });
      expect([method, path, response.status, response.headers.get('allow')]).toEqual([method, path, 405, allow]);
    }
  });

  it('405 with Allow: GET, HEAD for other methods on the local pages, which answer HEAD like GET', async () => {
    for (const [method, path] of [['POST', '/'], ['PUT', '/openapi.json'], ['DELETE', '/docs'], ['POST', '/docs/redoc.standalone.js']] as const) {
      const response = await fetch(`${stack.apiUrl}${path}`, { method });
      expect((await expectProblem(response, 405)).detail).toBe(`${method} is not allowed here; use GET, HEAD.`);
      expect(response.headers.get('allow')).toBe('GET, HEAD');
    }
    for (const path of ['/', '/openapi.json', '/docs']) {
      const [get, head] = await Promise.all([fetch(`${stack.apiUrl}${path}`), fetch(`${stack.apiUrl}${path}`, { method: 'HEAD' })]);
      expect([head.status, head.headers.get('content-type'), await head.text()]).toEqual([get.status, get.headers.get('content-type'), '']);
    }
  });

  it('413 from the handler for a body over its limit (5 MiB), nothing sent', async () => {
    expectClientProblem(await sendTyped(api, messageBody(tenant.organizationId, { TextContent: 'x'.repeat(5 * 1024 * 1024) })), 413);
    expect(await sentEmails(stack.sesUrl)).toHaveLength(0);
  });

  it('413 from the gateway for a streamed body past 10 MiB, without reading it all, and keeps serving', async () => {
    const chunk = Buffer.alloc(1024 * 1024, 'x');
    const limit = 64 * chunk.length;
    const { status, body, written } = await new Promise<{ status: number; body: string; written: number }>((resolve, reject) => {
      let written = 0;
      let answered = false;
      const req = request(stack.sendUrl, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
        answered = true;
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (part: string) => (text += part));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, body: text, written });
          req.destroy();
        });
      });
      // Once answered, the server may cut the connection while this side is still writing.
      req.on('error', (error) => answered || reject(error));
      // Chunked, no Content-Length: only counting while reading can catch it.
      const pump = () => {
        while (!answered && written < limit) {
          written += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        if (!answered) req.end();
      };
      pump();
    });
    expect(status).toBe(413);
    expect(JSON.parse(body)).toMatchObject({ status: 413, title: 'Request body too large' });
    expect(written).toBeLessThan(limit);
    expect((await fetch(`${stack.apiUrl}/`)).status).toBe(200);
  });

  it('413 from the gateway at once when Content-Length is over 10 MiB', async () => {
    const { status } = await declareOverGatewayCap(stack);
    expect(status).toBe(413);
  });

  it('413 from the gateway states the service limit (MAX_BODY_BYTES, 5 MiB by default), as the handler does', async () => {
    const fromGateway = await declareOverGatewayCap(stack);
    expect(JSON.parse(fromGateway.body)).toMatchObject({ status: 413, detail: 'The request body must be at most 5242880 bytes.' });
    const body = JSON.stringify(messageBody(tenant.organizationId, { TextContent: 'x'.repeat(5 * 1024 * 1024) }));
    const fromHandler = await expectProblem(await send(stack, tenant.apiKey, body), 413);
    expect(fromHandler.detail).toBe('The request body must be at most 5242880 bytes.');
  });

  it('400 for a body that is not valid UTF-8 (bytes 0xFF 0xFE in the Subject), nothing sent', async () => {
    const [before, after] = JSON.stringify(messageBody(tenant.organizationId, { Subject: 'Bad [] bytes' })).split('[]') as [string, string];
    const response = await fetch(stack.sendUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${tenant.apiKey}` },
      body: Buffer.concat([Buffer.from(before), Buffer.from([0xff, 0xfe]), Buffer.from(after)]),
    });
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
    expect(await sentEmails(stack.sesUrl)).toHaveLength(0);
    // Refused by the handler, which gets the bytes base64-encoded from the gateway.
    await expectProblem(response, 400);
  });

  it('415 for a body that is not declared as JSON', async () => {
    await expectProblem(await send(stack, tenant.apiKey, messageBody(tenant.organizationId), { 'Content-Type': 'text/plain' }), 415);
    expect(await sentEmails(stack.sesUrl)).toHaveLength(0);
  });
});

/** Declares a body past the gateway's 10 MiB read cap, sends one byte, and returns the answer. */
function declareOverGatewayCap(target: Pick<TestStack, 'sendUrl'>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(target.sendUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(11 * 1024 * 1024) } });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (part: string) => (body += part));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body });
        req.destroy();
      });
    });
    req.on('error', reject);
    req.write('{');
  });
}

describe('a stack with MAX_BODY_BYTES set', () => {
  let small: TestStack;
  beforeAll(async () => {
    small = await startTestStack({ serviceEnv: { MAX_BODY_BYTES: '4096' } });
  });
  afterAll(async () => small?.stop());

  it('states that limit in the gateway\'s own 413, as the handler does in its', async () => {
    const fromGateway = await declareOverGatewayCap(small);
    expect(fromGateway.status).toBe(413);
    expect(JSON.parse(fromGateway.body)).toMatchObject({ status: 413, detail: 'The request body must be at most 4096 bytes.' });
    // A well-formed key (of the other stack): the body size is checked before the key is looked up.
    const fromHandler = await expectProblem(await send(small, tenant.apiKey, 'x'.repeat(5000)), 413);
    expect(fromHandler.detail).toBe('The request body must be at most 4096 bytes.');
  });
});

describe('Idempotency-Key over HTTP', () => {
  it('replays the first response without sending again, and refuses another body with 422', async () => {
    const params = { header: { 'Idempotency-Key': `order-${Date.now()}` } };
    const first = await api.POST('/v1.2/email/send', { params, body: messageBody(tenant.organizationId) });
    expect(first.response.status).toBe(200);
    expect(first.response.headers.get('idempotent-replayed')).toBeNull();

    const replay = await api.POST('/v1.2/email/send', { params, body: messageBody(tenant.organizationId) });
    expect(replay.response.status).toBe(200);
    expect(replay.response.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.data).toEqual(first.data);

    expectClientProblem(await api.POST('/v1.2/email/send', { params, body: messageBody(tenant.organizationId, { Subject: 'Changed' }) }), 422);
    expect(await sentEmails(stack.sesUrl)).toHaveLength(1);
  });
});

describe('admin changes take effect at once (AUTH_CACHE_SECONDS=0)', () => {
  it('key rotate: the old key is refused, the new one works', async () => {
    const t = await provisionTenant(env);
    expect((await sendTyped(clientOf(stack, t.apiKey), messageBody(t.organizationId))).response.status).toBe(200);
    const { key } = await adminJson(env, 'key', 'rotate', '--user', t.userId);
    expect(key).not.toBe(t.apiKey);
    expectClientProblem(await sendTyped(clientOf(stack, t.apiKey), messageBody(t.organizationId)), 401);
    expect((await sendTyped(clientOf(stack, key), messageBody(t.organizationId))).response.status).toBe(200);
    expect(await sentEmails(stack.sesUrl)).toHaveLength(2);
  });

  it('key revoke: the key is refused', async () => {
    const t = await provisionTenant(env);
    const client = clientOf(stack, t.apiKey);
    expect((await sendTyped(client, messageBody(t.organizationId))).response.status).toBe(200);
    expect(await admin(env, 'key', 'revoke', '--user', t.userId)).toMatchObject({ code: 0 });
    const answer = await sendTyped(client, messageBody(t.organizationId));
    expectClientProblem(answer, 401);
    expect(answer.response.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
  });

  it('member remove and sender remove: 403 at once', async () => {
    const t = await provisionTenant(env, ['example.com', 'ops@acme.test']);
    const client = clientOf(stack, t.apiKey);
    await adminJson(env, 'sender', 'remove', '--org', t.organizationId, '--domain', 'example.com');
    expectClientProblem(await sendTyped(client, messageBody(t.organizationId)), 403);
    expect((await sendTyped(client, messageBody(t.organizationId, { From: 'ops@acme.test' }))).response.status).toBe(200);
    await adminJson(env, 'member', 'remove', '--org', t.organizationId, '--user', t.userId);
    expectClientProblem(await sendTyped(client, messageBody(t.organizationId, { From: 'ops@acme.test' })), 403);
  });
});
