/**
 * The local sealing key (docs/local.md, `LOCAL_SEALING_KEY`): with `LOCAL_DATA=memory`, a key the
 * operator gives is the one the settings page seals API keys with, as it is the one the admin CLI
 * seals webhook secrets with, and the one the stack's webhook worker opens them with; only with
 * none given does the stack draw one for its lifetime, for the settings page.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { createDynamoDbClient } from '../../functions/shared/runtime/clients';
import { itemKey } from '../../functions/shared/store/table';
import { LOCAL_CLIENT_ID } from '../../infra/local/oidc/provider';
import { localSealer } from '../../infra/local/sealing-key';
import { signIn } from '../support/oidc';
import type { TestStack } from './helpers';
import { adminEnv, adminJson, hookedTenant, messageBody, send, startTestStack } from './helpers';

const GIVEN = randomBytes(32).toString('base64');
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ serviceEnv: { LOCAL_SEALING_KEY: GIVEN } });
});
afterAll(async () => stack?.stop());

describe('LOCAL_SEALING_KEY with LOCAL_DATA=memory', () => {
  it('is the key the settings page seals a new API key with', async () => {
    const env = adminEnv(stack);
    const email = `sealed.${Date.now()}@users.example.net`;
    const { id: organizationId } = await adminJson(env, 'org', 'create', '--name', 'Sealed');
    const { id: userId } = await adminJson(env, 'user', 'create', '--email', email);
    await adminJson(env, 'member', 'add', '--org', organizationId, '--user', userId);
    // The CLI's key is not sealed; the page's rotate makes one that is.
    await adminJson(env, 'key', 'generate', '--user', userId);
    const { accessToken } = await signIn({ issuer: stack.oidcIssuer, clientId: LOCAL_CLIENT_ID, redirectUri: stack.settingsUrl, email });

    const made = await fetch(`${stack.apiUrl}/v1.2/me/api-key/rotate`, { method: 'POST', headers: { authorization: `Bearer ${accessToken}` } });
    expect(made.status).toBe(200);
    const { Key: key } = (await made.json()) as { Key: string };

    const client = createDynamoDbClient({ region: 'us-east-1', dynamodbEndpoint: stack.dynamodbEndpoint });
    try {
      const { Item } = await client.send(new GetCommand({ TableName: stack.tableName, Key: itemKey.user(userId), ConsistentRead: true }));
      expect(await localSealer({ LOCAL_SEALING_KEY: GIVEN }, 'userId').open(String(Item?.sealedKey), userId)).toBe(key);
    } finally {
      client.destroy();
    }
  });

  it('is the key the webhook worker opens a secret the admin CLI sealed with', async () => {
    // Neither the CLI nor the stack has a LOCAL_DATA_DIR here: only the given key is common to both.
    const hooked = await hookedTenant(stack, { ...adminEnv(stack), LOCAL_SEALING_KEY: GIVEN }, 'Hooked');
    try {
      const response = await send(stack, hooked.tenant.apiKey, messageBody(hooked.tenant.organizationId));
      expect(response.status).toBe(200);
      const deadline = Date.now() + 10_000;
      // `events()` verifies each signature with the secret the CLI printed.
      while (!hooked.events().some((event) => event.type === 'email.delivered') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(hooked.events().map((event) => event.type)).toEqual(expect.arrayContaining(['email.sent', 'email.delivered']));
    } finally {
      hooked.close();
    }
  });
});
