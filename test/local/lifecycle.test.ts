/**
 * Starting, stopping and starting again: data on disk survives a restart, the demo curl keeps
 * working, taken ports and a data folder in use fail with a message, and a DynamoDB outage
 * after start-up turns requests into 503s without stopping the stack.
 */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startDynamoDb } from '../../infra/local/emulators';
import { LocalStackError, PortUnavailableError, startLocalStack } from '../../infra/local/stack';
import type { TestStack } from './helpers';
import {
  adminEnv,
  adminJson,
  closePort,
  expectProblem,
  freePort,
  messageBody,
  occupyPort,
  provisionTenant,
  send,
  sentEmails,
  startTestStack,
} from './helpers';

describe('persistence (disk mode)', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'local-stack-'));
  });
  afterAll(async () => rm(dataDir, { recursive: true, force: true }));

  it('keeps Organizations, users, keys and the demo across a restart', async () => {
    const first = await startTestStack({ data: 'disk', dataDir });
    let tenant;
    try {
      expect(first.demo?.status).toBe('created');
      tenant = await provisionTenant(adminEnv(first));
      expect((await send(first, tenant.apiKey, messageBody(tenant.organizationId))).status).toBe(200);
    } finally {
      await first.stop();
    }
    const savedDemo = JSON.parse(await readFile(join(dataDir, 'demo.json'), 'utf8'));
    expect(savedDemo).toMatchObject({ organizationId: first.demo!.organizationId, apiKey: first.demo!.apiKey });
    expect((await stat(join(dataDir, 'demo.json'))).mode & 0o777).toBe(0o600);

    const second = await startTestStack({ data: 'disk', dataDir });
    try {
      expect(second.demo).toMatchObject({ status: 'reused', organizationId: first.demo!.organizationId, userId: first.demo!.userId, apiKey: first.demo!.apiKey });
      expect(second.demo!.exports).toContain(`export BASE_URL=${second.apiUrl}\n`);
      // The demo and the earlier tenant still work, with the keys issued before the restart.
      expect((await send(second, second.demo!.apiKey, messageBody(second.demo!.organizationId))).status).toBe(200);
      expect((await send(second, tenant.apiKey, messageBody(tenant.organizationId))).status).toBe(200);
      expect(await adminJson(adminEnv(second), 'key', 'show', '--user', tenant.userId)).toMatchObject({ masked: `tme_…${tenant.apiKey.slice(-4)}` });
    } finally {
      await second.stop();
    }
  });

  it('reports a saved demo whose key was rotated instead of printing a curl that would fail', async () => {
    const first = await startTestStack({ data: 'disk', dataDir });
    try {
      await adminJson(adminEnv(first), 'key', 'rotate', '--user', first.demo!.userId);
    } finally {
      await first.stop();
    }
    const second = await startTestStack({ data: 'disk', dataDir });
    try {
      expect(second.demo).toBeUndefined();
      expect(second.demoProblem).toMatch(/rotated or revoked/);
    } finally {
      await second.stop();
    }
  });

  it('refuses a second stack on the same data folder while the first runs', async () => {
    const first = await startTestStack({ data: 'disk', dataDir });
    try {
      const second = startTestStack({ data: 'disk', dataDir });
      await expect(second).rejects.toThrow(LocalStackError);
      await expect(second).rejects.toThrow(/Another local stack \(pid \d+\) is using .*LOCAL_DATA_DIR/);
      expect((await fetch(`${first.apiUrl}/`)).status).toBe(200);
    } finally {
      await first.stop();
    }
  });

  it('memory mode writes nothing and seeds a fresh demo on every start', async () => {
    const a = await startTestStack({ dataDir: join(dataDir, 'unused') });
    await a.stop();
    const b = await startTestStack({ dataDir: join(dataDir, 'unused') });
    await b.stop();
    expect(a.demo?.status).toBe('created');
    expect(b.demo?.status).toBe('created');
    expect(b.demo!.organizationId).not.toBe(a.demo!.organizationId);
    await expect(stat(join(dataDir, 'unused'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('ports', () => {
  it.each([
    ['PORT', 'port'],
    ['DYNAMODB_PORT', 'dynamodbPort'],
    ['SES_PORT', 'sesPort'],
    ['OIDC_PORT', 'oidcPort'],
  ] as const)('a taken %s fails with a message naming it, and leaves nothing running', async (variable, option) => {
    const taken = await occupyPort(0);
    const port = (taken.address() as { port: number }).port;
    const others = { port: await freePort(), dynamodbPort: await freePort(), sesPort: await freePort(), oidcPort: await freePort() };
    try {
      const start = startLocalStack({ data: 'memory', ...others, [option]: port });
      await expect(start).rejects.toThrow(PortUnavailableError);
      await expect(start).rejects.toThrow(`Port ${port} (${variable}) is already in use: stop what is using it or set ${variable} to another port`);
      // Whatever had started before the failure was closed again.
      for (const [name, other] of Object.entries(others)) {
        if (name !== option) await closePort(await occupyPort(other));
      }
    } finally {
      await closePort(taken);
    }
  });
});

async function deliveredWithin(stack: TestStack, tenant: { apiKey: string; organizationId: string }, messageId: string): Promise<void> {
  for (const end = Date.now() + 3_000; Date.now() < end; await new Promise((resolve) => setTimeout(resolve, 50))) {
    const response = await fetch(stack.statusUrl, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ OrganizationId: tenant.organizationId, MessageIds: [messageId] }),
    });
    if (((await response.json()) as { Messages: { Status: string }[] }).Messages[0]?.Status === 'Delivered') return;
  }
  throw new Error(`${messageId} was not delivered within 3 s`);
}

describe('a DynamoDB outage after start-up', () => {
  it('turns requests into 503 with Retry-After, and the stack keeps serving', async () => {
    const dynamo = await startDynamoDb();
    // The handler logs each 503 as a warning; expected here, so kept out of the test output.
    const stack = await startTestStack({ dynamodbEndpoint: dynamo.endpoint, serviceEnv: { POWERTOOLS_LOG_LEVEL: 'ERROR' } });
    try {
      const tenant = await provisionTenant(adminEnv(stack));
      const first = await send(stack, tenant.apiKey, messageBody(tenant.organizationId));
      expect(first.status).toBe(200);
      // The mailbox simulator records the message's events in the background; dynalite throws
      // from its own callbacks (killing the test process) if it is closed under such a write.
      const { Messages } = (await first.json()) as { Messages: { MessageId: string }[] };
      await deliveredWithin(stack, tenant, Messages[0]!.MessageId);

      await dynamo.close();
      const before = (await sentEmails(stack.sesUrl)).length;
      for (let i = 0; i < 2; i++) {
        const response = await send(stack, tenant.apiKey, messageBody(tenant.organizationId));
        await expectProblem(response, 503);
        expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
      }
      expect((await sentEmails(stack.sesUrl)).length).toBe(before);
      expect((await fetch(`${stack.apiUrl}/`)).status).toBe(200);
    } finally {
      await stack.stop();
      await dynamo.close().catch(() => undefined);
    }
  });

  it('at start-up, fails with a message naming DYNAMODB_ENDPOINT', async () => {
    const endpoint = `http://127.0.0.1:${await freePort()}`;
    await expect(startTestStack({ dynamodbEndpoint: endpoint })).rejects.toThrow(`Cannot reach DynamoDB at ${endpoint} (DYNAMODB_ENDPOINT) (ECONNREFUSED).`);
  });
});
