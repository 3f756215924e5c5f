/**
 * The delivery lifecycle through the local stack (CONTRACT section 10), over real HTTP: every
 * mailbox simulator outcome read back from the status endpoint, suppression,
 * status isolation between Organizations, webhooks signed per Standard Webhooks (verified with
 * the `standardwebhooks` library by a receiver on 127.0.0.1) and retried, a dead endpoint that
 * delays no send, and the admin commands. Every response is checked against openapi.json.
 */
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { compileSchema, openApiDocument } from '../support/openapi';
import type { TestStack, Tenant } from './helpers';
import { admin, adminEnv, adminJson, expectProblem, messageBody, provisionTenant, send, sentEmails, startTestStack } from './helpers';

const SIM = (box: string) => `${box}@simulator.amazonses.com`;

let stack: TestStack;
let env: Record<string, string>;
let tenant: Tenant;
let other: Tenant;

beforeAll(async () => {
  stack = await startTestStack({ webhookRetryScale: 0.001 });
  env = adminEnv(stack);
  [tenant, other] = [await provisionTenant(env), await provisionTenant(env)];
});
afterAll(async () => stack?.stop());

async function status(apiKey: string, body: unknown): Promise<Response> {
  return fetch(stack.statusUrl, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

async function sendTo(who: Tenant, to: string[]): Promise<Record<string, any>> {
  const response = await send(stack, who.apiKey, messageBody(who.organizationId, { To: to }));
  return (await response.json()) as Record<string, any>;
}

/**
 * Polls the status endpoint until `done` holds for the message, or fails after `ms`: a generous
 * bound against a hang on a busy shared machine, not a speed claim (speed is the benchmark's).
 */
async function statusWhen(who: Tenant, messageId: string, done: (message: Record<string, any>) => boolean, ms = 15_000): Promise<Record<string, any>> {
  const until = Date.now() + ms;
  for (;;) {
    const response = await status(who.apiKey, { OrganizationId: who.organizationId, MessageIds: [messageId] });
    expect(response.status).toBe(200);
    const [message] = ((await response.json()) as { Messages: Record<string, any>[] }).Messages;
    if (done(message!)) return message!;
    if (Date.now() > until) throw new Error(`status of ${messageId} after ${ms} ms: ${JSON.stringify(message)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('the mailbox simulator, read back from the status endpoint', () => {
  it.each([
    ['success', 'Delivered', 'Delivered', null],
    ['bounce', 'Bounced', 'Bounced', 'Permanent/General'],
    ['suppressionlist', 'Bounced', 'Bounced', 'Permanent/Suppressed'],
    ['ooto', 'Delivered', 'Delivered', null],
    ['complaint', 'Complained', 'Complained', 'abuse'],
  ])('%s@: %s', async (box, messageStatus, recipientStatus, detail) => {
    const result = await sendTo(tenant, [SIM(box)]);
    const id = result.Messages[0].MessageId as string;
    const message = await statusWhen(tenant, id, (m) => m.Status === messageStatus);
    // An untracked message: no opens or clicks, said as such.
    const none = { Opens: 0, FirstOpenedAt: null, Clicks: [] };
    expect(message).toEqual({ MessageId: id, Status: messageStatus, Recipients: [{ Address: SIM(box), Status: recipientStatus, At: expect.any(String), Detail: detail, ...none }], Tags: {}, ...none });
  });

  it('delivers anyone else, shows every message in the viewer, and stores the out-of-office auto-reply', async () => {
    const result = await sendTo(tenant, ['alice@example.org', SIM('ooto')]);
    await statusWhen(tenant, result.Messages[0].MessageId, (m) => m.Status === 'Delivered');
    const emails = await sentEmails(stack.sesUrl);
    expect(emails.some((email) => email.messageId === result.Messages[0].MessageId)).toBe(true);
    expect(emails.some((email) => email.from.includes(SIM('ooto')) && email.destination.to.includes('noreply@example.com') && email.subject.startsWith('Out of the office'))).toBe(true);
  });
});

describe('suppression', () => {
  it('suppresses a hard-bounced address for its Organization only: the next send skips it, and names it', async () => {
    const first = await sendTo(tenant, [SIM('bounce+suppress')]);
    await statusWhen(tenant, first.Messages[0].MessageId, (m) => m.Status === 'Bounced');
    const again = await send(stack, tenant.apiKey, messageBody(tenant.organizationId, { To: [SIM('bounce+suppress')] }));
    // The request alone is at fault (every recipient suppressed): 422, not an outage's 502.
    expect(again.status).toBe(422);
    expect(((await again.json()) as any).Messages[0]).toEqual({
      Index: 0,
      Status: 'Failed',
      Error: { Code: 'Suppressed', Message: expect.any(String), Retryable: false },
      Suppressed: [SIM('bounce+suppress')],
    });
    const mixed = await sendTo(tenant, [SIM('bounce+suppress'), SIM('success')]);
    expect(mixed.Messages[0]).toEqual({ Index: 0, Status: 'Sent', MessageId: expect.any(String), Suppressed: [SIM('bounce+suppress')] });
    const delivered = await statusWhen(tenant, mixed.Messages[0].MessageId, (m) => m.Status === 'Delivered');
    expect(delivered.Recipients.map((r: any) => r.Address)).toEqual([SIM('success')]);
    // Another Organization's list is its own.
    expect((await sendTo(other, [SIM('bounce+suppress')])).Messages[0]).toEqual({ Index: 0, Status: 'Sent', MessageId: expect.any(String) });
  });

  it('suppresses a complaining address; the admin CLI lists it and takes it off again', async () => {
    const first = await sendTo(other, [SIM('complaint+cli')]);
    await statusWhen(other, first.Messages[0].MessageId, (m) => m.Status === 'Complained');
    const listed = await adminJson(env, 'suppression', 'list', '--org', other.organizationId);
    expect(listed.addresses).toEqual(expect.arrayContaining([{ address: SIM('complaint+cli'), reason: 'Complaint', at: expect.any(String) }]));
    expect((await admin(env, 'suppression', 'list', '--org', other.organizationId)).stdout).toMatch(/suppressed address.*complaint\+cli@simulator\.amazonses\.com \(Complaint, /);
    expect(await adminJson(env, 'suppression', 'remove', '--org', other.organizationId, '--address', SIM('complaint+cli'))).toEqual({
      organizationId: other.organizationId,
      address: SIM('complaint+cli'),
      suppressed: false,
    });
    expect((await admin(env, 'suppression', 'remove', '--org', other.organizationId, '--address', SIM('complaint+cli'))).code).toBe(3);
    expect((await sendTo(other, [SIM('complaint+cli')])).Messages[0].Status).toBe('Sent');
  });
});

describe('POST /v1.2/email/status', () => {
  it('answers in request order, and Unknown for another Organization\'s message (no leak)', async () => {
    const mine = await sendTo(tenant, [SIM('success')]);
    const theirs = await sendTo(other, [SIM('success')]);
    const [mineId, theirsId] = [mine.Messages[0].MessageId, theirs.Messages[0].MessageId];
    await statusWhen(other, theirsId, (m) => m.Status === 'Delivered');
    await statusWhen(tenant, mineId, (m) => m.Status === 'Delivered');
    const response = await status(tenant.apiKey, { organizationId: tenant.organizationId.toUpperCase(), MessageIds: [theirsId, mineId, 'never-sent', mineId] });
    const body = (await response.json()) as any;
    expect(body.Messages.map((m: any) => [m.MessageId, m.Status])).toEqual([[theirsId, 'Unknown'], [mineId, 'Delivered'], ['never-sent', 'Unknown'], [mineId, 'Delivered']]);
    expect(body.Messages[0]).toEqual({ MessageId: theirsId, Status: 'Unknown', Recipients: [], Tags: {} });
  });

  it('has the send endpoint\'s rules: 401 without a key, 403 outside the Organization, 400 listing every problem', async () => {
    await expectProblem(await fetch(stack.statusUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }), 401);
    await expectProblem(await status(tenant.apiKey, { OrganizationId: other.organizationId, MessageIds: ['x'] }), 403);
    const invalid = await expectProblem(await status(tenant.apiKey, { OrganizationId: 'nope', MessageIds: ['ok', 'has space', 7], Extra: 1 }), 400);
    expect(invalid.errors.map((e: any) => e.pointer).sort()).toEqual(['/Extra', '/MessageIds/1', '/MessageIds/2', '/OrganizationId']);
    await expectProblem(await status(tenant.apiKey, { OrganizationId: tenant.organizationId, MessageIds: Array.from({ length: 101 }, (_, i) => `m${i}`) }), 400);
    await expectProblem(await fetch(stack.statusUrl, { method: 'GET' }), 405);
  });

  it('documents a request example the schema accepts', () => {
    const media = openApiDocument.paths['/v1.2/email/status'].post.requestBody.content['application/json'];
    expect(compileSchema(media.schema)(media.examples.two.value)).toBe(true);
    const hook = openApiDocument.webhooks.emailEvent.post.requestBody.content['application/json'];
    expect(compileSchema(hook.schema)(hook.examples.bounced.value)).toBe(true);
  });
});

interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** The webhook function gave up on this request (its attempt timeout) or it was answered. */
  closed: boolean;
}

/** A webhook receiver on 127.0.0.1 that answers each request with `answer(n)` (a status, or 'hang'). */
async function receiver(answer: (n: number) => number | 'hang'): Promise<{ url: string; received: Received[]; server: Server }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const request: Received = { headers: req.headers, body, closed: false };
      received.push(request);
      res.on('close', () => (request.closed = true));
      const reply = answer(received.length);
      if (reply !== 'hang') res.writeHead(reply).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, received, server };
}

async function until(check: () => boolean, ms = 3_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('webhooks', () => {
  it('posts each recorded event, signed per Standard Webhooks with the secret the CLI printed once, retrying a failing endpoint', async () => {
    // The first attempt of each event fails; the retry (5 s in AWS, shrunk here) succeeds.
    const attempts = new Map<string, number>();
    const hook = await receiver(() => 200);
    const failingFirst = await receiver((n) => (n % 2 === 1 ? 500 : 200));
    try {
      const { secret } = await adminJson(env, 'webhook', 'set', '--org', tenant.organizationId, '--url', failingFirst.url);
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
      const result = await sendTo(tenant, [SIM('bounce+hook')]);
      const id = result.Messages[0].MessageId;
      await until(() => failingFirst.received.filter((r) => r.headers['webhook-id'] && JSON.parse(r.body).type === 'email.bounced').length >= 2);
      const verifier = new Webhook(secret as string);
      const events = failingFirst.received.map((r) => ({ id: r.headers['webhook-id'] as string, payload: verifier.verify(r.body, r.headers as Record<string, string>) as any }));
      for (const event of events) attempts.set(event.id, (attempts.get(event.id) ?? 0) + 1);
      const bounced = events.find((e) => e.payload.type === 'email.bounced')!;
      expect(bounced.payload).toEqual({
        type: 'email.bounced',
        timestamp: expect.any(String),
        data: { OrganizationId: tenant.organizationId, MessageId: id, Status: 'Bounced', Recipients: [{ Address: SIM('bounce+hook'), Status: 'Bounced', At: expect.any(String), Detail: 'Permanent/General' }], Tags: {} },
      });
      // Every event came twice (a failure, then the retry), with the same webhook-id.
      expect(attempts.get(bounced.id)).toBe(2);
      // A signature made with another secret is refused.
      const forged = new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`);
      expect(() => forged.verify(failingFirst.received[0]!.body, failingFirst.received[0]!.headers as Record<string, string>)).toThrow();

      await adminJson(env, 'webhook', 'set', '--org', tenant.organizationId, '--url', hook.url);
      expect(await adminJson(env, 'webhook', 'remove', '--org', tenant.organizationId)).toEqual({ organizationId: tenant.organizationId, webhook: false });
      expect((await admin(env, 'webhook', 'remove', '--org', tenant.organizationId)).code).toBe(3);
      expect((await admin(env, 'webhook', 'set', '--org', tenant.organizationId, '--url', 'http://example.com/hook')).code).toBe(1);
      // Not the metadata endpoint, a private range or a loopback address in disguise (security audit round 2, finding 3).
      for (const url of ['https://169.254.169.254/latest/meta-data/', 'https://10.0.0.8/hook', 'https://[::ffff:a9fe:a9fe]/hook', 'https://2852039166/hook']) {
        const refused = await admin(env, 'webhook', 'set', '--org', tenant.organizationId, '--url', url);
        expect([url, refused.code, refused.stderr]).toEqual([url, 1, expect.stringContaining('must point to a public address')]);
      }
    } finally {
      hook.server.close();
      failingFirst.server.close();
    }
  });

  it('a dead endpoint delays neither sending nor the status', async () => {
    const dead = await receiver(() => 'hang');
    try {
      await adminJson(env, 'webhook', 'set', '--org', other.organizationId, '--url', dead.url);
      // First the endpoint holds a delivery open, until the webhook function's attempt timeout.
      await sendTo(other, [SIM('success')]);
      await until(() => dead.received.length > 0, 15_000);
      const held = dead.received[0]!;
      // Meanwhile sends are answered and their status moves on: what happens is ordered, not timed.
      for (let i = 0; i < 3; i++) expect((await sendTo(other, [SIM('success')])).Messages[0].Status).toBe('Sent');
      const last = await sendTo(other, [SIM('success')]);
      await statusWhen(other, last.Messages[0].MessageId, (m) => m.Status === 'Delivered');
      expect(held.closed).toBe(false);
    } finally {
      dead.server.closeAllConnections();
      dead.server.close();
      await admin(env, 'webhook', 'remove', '--org', other.organizationId);
    }
  });
});
