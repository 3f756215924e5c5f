/**
 * Runs the real send handler against dynalite and the SES emulator, started in-process, with
 * the real adapters. Tests swap in a fake only where a fault must be injected.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from '@jest/globals';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { createDependencies } from '../../functions/send/dependencies';
import { createHandler } from '../../functions/send/handler';
import { SEND_PATH } from '../../functions/send/route';
import type { SendDependencies } from '../../functions/send/send-request';
import { createDynamoDbClient } from '../../functions/shared/runtime/clients';
import type { Config } from '../../functions/shared/runtime/config';
import { loadConfig } from '../../functions/shared/runtime/config';
import { DynamoDbAdminStore } from '../../infra/admin/admin-store';
import { ensureTable, startDynamoDb, startSesEmulator } from '../../infra/local/emulators';
import type { RunningService } from '../../infra/local/emulators';
import type { EventOptions } from './events';
import { httpApiEvent, lambdaContext } from './events';
import { assertResponseMatchesOpenApi } from './openapi';
import type { StoredEmail } from './ses-store';
import { clearEmails, sentEmails } from './ses-store';

export interface Tenant {
  readonly organizationId: string;
  readonly userId: string;
  readonly apiKey: string;
}

export interface Harness {
  readonly config: Config;
  readonly admin: DynamoDbAdminStore;
  readonly dynamoDb: RunningService;
  readonly ses: RunningService;
  readonly deps: SendDependencies;
  /** Invokes the handler (optionally built with overridden dependencies) and parses the body. */
  invoke(options: EventOptions, overrides?: Partial<SendDependencies>, remainingMs?: number): Promise<InvokeResult>;
  /** An Organization with one member holding a key, and `example.com` as sender identity. */
  tenant(senders?: readonly string[]): Promise<Tenant>;
  sentEmails(): Promise<StoredEmail[]>;
  clearEmails(): Promise<void>;
  stop(): Promise<void>;
}

export interface InvokeResult {
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  readonly body: any;
  readonly rawBody: string;
}

export async function startHarness(env: Record<string, string> = {}): Promise<Harness> {
  const [dynamoDb, ses] = await Promise.all([startDynamoDb(), startSesEmulator()]);
  const config = loadConfig({
    TABLE_NAME: `test-${randomUUID()}`,
    AWS_REGION: 'us-east-1',
    DYNAMODB_ENDPOINT: dynamoDb.endpoint,
    SES_ENDPOINT: ses.endpoint,
    AUTH_CACHE_SECONDS: '0',
    ...env,
  });
  await ensureTable(new DynamoDBClient({ region: config.region, endpoint: dynamoDb.endpoint }), config.tableName);
  const documents = createDynamoDbClient(config);
  const admin = new DynamoDbAdminStore(documents, config.tableName);
  // The service's own composition root, with a silent logger and a test namespace for metrics.
  const deps: SendDependencies = {
    ...createDependencies(config),
    logger: new Logger({ serviceName: 'email-send-api-test', logLevel: 'SILENT' }),
    metrics: new Metrics({ namespace: 'EmailSendApiTest', serviceName: 'email-send-api-test' }),
  };
  const defaultHandler = createHandler(deps);

  return {
    config,
    admin,
    dynamoDb,
    ses,
    deps,
    async invoke(options, overrides, remainingMs) {
      const handler = overrides ? createHandler({ ...deps, ...overrides }) : defaultHandler;
      const result = (await handler(httpApiEvent(options), lambdaContext(remainingMs))) as APIGatewayProxyStructuredResultV2;
      const rawBody = String(result.body ?? '');
      // Every response any suite produces must be one openapi.json documents.
      assertResponseMatchesOpenApi({
        method: options.method ?? 'POST',
        path: options.path ?? SEND_PATH,
        status: result.statusCode ?? 0,
        headers: (result.headers ?? {}) as Record<string, string>,
        body: rawBody,
      });
      return {
        statusCode: result.statusCode ?? 0,
        headers: (result.headers ?? {}) as Record<string, string>,
        body: rawBody ? JSON.parse(rawBody) : undefined,
        rawBody,
      };
    },
    async tenant(senders = ['example.com']) {
      const organization = await admin.createOrganization({ name: 'Acme' });
      const user = await admin.createUser({ email: `${randomUUID()}@users.example.net` });
      await admin.addMember(organization.id, user.id);
      for (const sender of senders) {
        await admin.addSender(organization.id, sender.includes('@') ? { address: sender } : { domain: sender });
      }
      const { key } = await admin.generateKey(user.id);
      return { organizationId: organization.id, userId: user.id, apiKey: key };
    },
    sentEmails: () => sentEmails(ses.endpoint),
    clearEmails: () => clearEmails(ses.endpoint),
    async stop() {
      documents.destroy();
      await Promise.all([dynamoDb.close().catch(() => undefined), ses.close()]);
    },
  };
}

/** Headers for a valid JSON request with the tenant's key. */
export function authorised(tenant: Tenant, extra: Record<string, string> = {}): Record<string, string> {
  return { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json', ...extra };
}

/** A valid one-message body; fields can be overridden or removed with `undefined`. */
export function message(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const base: Record<string, unknown> = {
    To: ['alice@example.org'],
    From: 'noreply@example.com',
    Subject: 'Your receipt',
    TextContent: 'Thanks for your order.',
    ...overrides,
  };
  return Object.fromEntries(Object.entries(base).filter(([, value]) => value !== undefined));
}

export function sendBody(tenant: Tenant, messages: unknown[] = [message()]): Record<string, unknown> {
  return { OrganizationId: tenant.organizationId, Messages: messages };
}

/**
 * Starts one harness and one tenant for the test file, stopped after it: `useHarness((h, t) => {
 * harness = h; tenant = t; })`.
 */
export function useHarness(
  receive: (harness: Harness, tenant: Tenant) => void,
  options: { env?: Record<string, string>; senders?: readonly string[] } = {},
): void {
  let harness: Harness | undefined;
  beforeAll(async () => {
    harness = await startHarness(options.env);
    receive(harness, await harness.tenant(options.senders));
  });
  afterAll(async () => harness?.stop());
}
