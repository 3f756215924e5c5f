/**
 * Shared by the local-stack suites: a stack on free ports, the admin CLI called through
 * `runAdmin` exactly as `npm run admin` does, and the SES emulator's store.
 */
import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';
import { afterAll, beforeAll, expect } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { runAdmin } from '../../infra/admin/cli';
import type { LocalStack, LocalStackOptions } from '../../infra/local/stack';
import { startLocalStack } from '../../infra/local/stack';
import { LOCAL_CLIENT_ID } from '../../infra/local/oidc/provider';
import { signIn } from '../support/oidc';
import type { ApiClient, Message, SendRequest } from '../support/api-client';
import { apiClient } from '../support/api-client';
import { compileSchema, openApiDocument, validateFetchesTo } from '../support/openapi';

export interface TestStack extends LocalStack {
  /** Every progress and access-log line the stack printed. */
  readonly logs: string[];
}

/** A second instance of `first`'s deployment: the same table and the same SES endpoint (so the same rate gate). */
export function startSecondInstance(first: TestStack, options: LocalStackOptions = {}): Promise<TestStack> {
  return startTestStack({ dynamodbEndpoint: first.dynamodbEndpoint, sesEndpoint: first.sesUrl, tableName: first.tableName, ...options });
}

/**
 * Two instances of one deployment for the suite (started before its tests, stopped after): the
 * first with `options`, the second sharing its table and SES endpoint. Read them inside hooks and tests.
 *
 * The second has served one message before any test runs. Its first request is its cold start
 * (connections, the first call through each client, reading the rate from GetAccount): 0.4–0.6 s
 * here and up to 2.5 s with the other core busy, when a flood on the first instance got 46
 * messages ahead of a newcomer instead of the usual 22. The suites judge sharing and pacing
 * between warm instances; a cold start is the benchmark's.
 */
export function useTwoInstances(options: LocalStackOptions = {}): { readonly first: TestStack; readonly second: TestStack } {
  let first: TestStack | undefined;
  let second: TestStack | undefined;
  beforeAll(async () => {
    first = await startTestStack(options);
    second = await startSecondInstance(first);
    const demo = first.demo!;
    const warmUp = { OrganizationId: demo.organizationId, Messages: [{ From: 'noreply@example.com', To: ['warm-up@example.org'], Subject: 'warm-up', TextContent: 'Warming up.' }] };
    expect((await send(second, demo.apiKey, warmUp)).status).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
  });
  return {
    get first() {
      if (!first) throw new Error('the first instance is not started yet');
      return first;
    },
    get second() {
      if (!second) throw new Error('the second instance is not started yet');
      return second;
    },
  };
}

export async function startTestStack(options: LocalStackOptions = {}): Promise<TestStack> {
  const logs: string[] = [];
  const stack = await startLocalStack({
    port: 0,
    dynamodbPort: 0,
    sesPort: 0,
    oidcPort: 0,
    data: 'memory',
    ...options,
    serviceEnv: { AUTH_CACHE_SECONDS: '0', ...options.serviceEnv },
    log: (line) => {
      logs.push(line);
      // A fault of the local gateway is always a bug (it answers 502): say where, whatever the test checks.
      if (line.startsWith('local gateway fault')) console.error(line);
    },
  });
  // Every response the local suites fetch is checked against openapi.json.
  validateFetchesTo(stack.apiUrl);
  return { ...stack, logs };
}

export interface AdminResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** The environment that points the admin CLI at a stack's table, as an operator would set it. */
export function adminEnv(stack: Pick<LocalStack, 'dynamodbEndpoint' | 'tableName'>): Record<string, string> {
  return { DYNAMODB_ENDPOINT: stack.dynamodbEndpoint, TABLE_NAME: stack.tableName };
}

export async function admin(env: Record<string, string | undefined>, ...argv: string[]): Promise<AdminResult> {
  let stdout = '';
  let stderr = '';
  const code = await runAdmin(argv, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env,
  });
  return { code, stdout, stderr };
}

/** Runs an admin command with --json that must succeed, and returns its one JSON object. */
export async function adminJson(env: Record<string, string | undefined>, ...argv: string[]): Promise<Record<string, any>> {
  const result = await admin(env, ...argv, '--json');
  expect(result).toMatchObject({ code: 0, stderr: '' });
  expect(result.stdout.endsWith('\n')).toBe(true);
  expect(result.stdout.trim().split('\n')).toHaveLength(1);
  return JSON.parse(result.stdout) as Record<string, any>;
}

export interface Tenant {
  readonly organizationId: string;
  readonly userId: string;
  readonly apiKey: string;
}

/** An Organization with one member holding a key and `example.com` as sender, made with the CLI. */
export async function provisionTenant(env: Record<string, string>, senders: readonly string[] = ['example.com']): Promise<Tenant> {
  const { id: organizationId } = await adminJson(env, 'org', 'create', '--name', 'Acme');
  const { id: userId } = await adminJson(env, 'user', 'create', '--email', `${Math.random().toString(36).slice(2)}@users.example.net`);
  await adminJson(env, 'member', 'add', '--org', organizationId, '--user', userId);
  for (const sender of senders) {
    await adminJson(env, 'sender', 'add', '--org', organizationId, sender.includes('@') ? '--address' : '--domain', sender);
  }
  const { key: apiKey } = await adminJson(env, 'key', 'generate', '--user', userId);
  return { organizationId, userId, apiKey };
}

/** One message in a send request, typed by openapi.json: a field the document drops or renames fails the type-check. */
export function messageBody(organizationId: string, overrides: Partial<Message> = {}): SendRequest & { Messages: Message[] } {
  const message: Message = { From: 'noreply@example.com', To: ['alice@example.org'], Subject: 'Your receipt', TextContent: 'Thanks for your order.' };
  // TypeScript cannot follow the "a recipient and a body" unions through a spread of partial
  // fields; each part is checked on its own, and the service judges the combination.
  return { OrganizationId: organizationId, Messages: [{ ...message, ...overrides } as Message] };
}

/** The typed client (openapi-fetch over the generated types) of a stack, calling with that key. */
export function clientOf(stack: Pick<LocalStack, 'apiUrl'>, apiKey?: string): ApiClient {
  return apiClient(stack.apiUrl, apiKey);
}

/** POSTs raw JSON (or any text) to the send endpoint: for what the typed client would not send. */
export function send(stack: LocalStack, apiKey: string | undefined, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(stack.sendUrl, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      ...(apiKey !== undefined && { Authorization: `Bearer ${apiKey}` }),
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export { clearEmails, sentEmails } from '../support/ses-store';

/**
 * A port nothing listens on right now (the tests bind it moments later). Drawn below Linux's
 * ephemeral range (32768 and up), which the kernel hands to every `listen(0)` and outgoing
 * connection, so none of those can take it in between.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; ; attempt += 1) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const server = await occupyPort(port).catch((error: unknown) => {
      if (attempt < 50) return undefined;
      throw error;
    });
    if (server) {
      await closePort(server);
      return port;
    }
  }
}

/** Holds a port on 127.0.0.1 until closed, as another program would. */
export function occupyPort(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

export function closePort(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Checks the response is an RFC 9457 problem document with that status, and returns it. */
export async function expectProblem(response: Response, status: number): Promise<Record<string, any>> {
  return checkProblem(response, status, await response.json());
}

/** The same for an answer of the typed client, which has read the body into `error`. */
export function expectClientProblem(answer: { response: Response; error?: unknown }, status: number): Record<string, any> {
  return checkProblem(answer.response, status, answer.error);
}

function checkProblem(response: Response, status: number, parsed: unknown): Record<string, any> {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  const body = parsed as Record<string, any>;
  expect(body).toMatchObject({ status, title: expect.any(String), type: expect.stringMatching(/^https?:\/\/.+\/problems\/[a-z-]+$/) });
  expect(JSON.stringify(body)).not.toMatch(/at .+\.(ts|js):\d+/);
  return body;
}

/** `YYYY-MM-DD HH:MM:SS` (UTC) of the first whole second at least `ms` from now: a `SendAt` and its time. */
export function inAbout(ms: number): { text: string; at: number } {
  const at = Math.ceil((Date.now() + ms) / 1_000) * 1_000;
  return { text: new Date(at).toISOString().slice(0, 19).replace('T', ' '), at };
}

export interface WebhookReceiver {
  readonly url: string;
  /** Every request so far, in order. */
  readonly received: { headers: Record<string, string>; body: string }[];
  close(): void;
}

/** A webhook endpoint on 127.0.0.1 that answers every request 204 and keeps it. */
export async function webhookReceiver(): Promise<WebhookReceiver> {
  const received: WebhookReceiver['received'] = [];
  const server = createHttpServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      received.push({ headers: req.headers as Record<string, string>, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

export interface HookedTenant {
  readonly tenant: Tenant;
  /** The member's settings-page access token (signed in through the local OpenID provider). */
  readonly token: string;
  /** Every webhook received so far, verified with the Organization's secret (a forged or unsigned one throws). */
  events(): { type: string; data: Record<string, any> }[];
  close(): void;
}

/** An Organization of its own (member with a key, signed in on the settings page) whose webhook is a receiver on 127.0.0.1. */
export async function hookedTenant(stack: TestStack, env: Record<string, string>, name: string): Promise<HookedTenant> {
  const hook = await webhookReceiver();
  const email = `${name.toLowerCase()}-${randomUUID().slice(0, 12)}@users.example.net`;
  const { id: organizationId } = await adminJson(env, 'org', 'create', '--name', name);
  const { id: userId } = await adminJson(env, 'user', 'create', '--email', email);
  await adminJson(env, 'member', 'add', '--org', organizationId, '--user', userId);
  await adminJson(env, 'sender', 'add', '--org', organizationId, '--domain', 'example.com');
  const { key: apiKey } = await adminJson(env, 'key', 'generate', '--user', userId);
  const { secret } = await adminJson(env, 'webhook', 'set', '--org', organizationId, '--url', hook.url);
  const { accessToken } = await signIn({ issuer: stack.oidcIssuer, clientId: LOCAL_CLIENT_ID, redirectUri: stack.settingsUrl, email });
  const verifier = new Webhook(secret as string);
  return {
    tenant: { organizationId, userId, apiKey } as Tenant,
    token: accessToken,
    events: () => hook.received.map((r) => verifier.verify(r.body, r.headers) as { type: string; data: Record<string, any> }),
    close: hook.close,
  };
}

const validScheduleEvent = compileSchema(openApiDocument.components.schemas.ScheduleWebhookEvent);

/**
 * Cancels a waiting schedule through the cancel endpoint, then returns every webhook the
 * Organization got about it once its `email.cancelled` came (within 4 s), each checked against
 * the document's ScheduleWebhookEvent (its `data` is closed).
 */
export async function cancelAndHear(stack: TestStack, hooked: HookedTenant, apiKey: string, scheduleId: string): Promise<{ type: string; data: Record<string, any> }[]> {
  const cancel = await fetch(stack.cancelUrl, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ OrganizationId: hooked.tenant.organizationId, ScheduleIds: [scheduleId] }) });
  expect(cancel.status).toBe(200);
  const about = () => hooked.events().filter((e) => e.data.ScheduleId === scheduleId);
  const end = Date.now() + 4_000;
  while (!about().some((e) => e.type === 'email.cancelled') && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 50));
  for (const event of about()) expect([validScheduleEvent(event), validScheduleEvent.errors]).toEqual([true, null]);
  return about();
}
