/**
 * `user create --user-pool-id` and `user invite` against dynalite, with Cognito's client mocked
 * (aws-sdk-client-mock) for what moto_server cannot show: the exact request the CLI makes
 * (invitation by e-mail, a field moto does not keep) and a fault only the mock can inject
 * (InternalErrorException). The pool itself, created users and `UsernameExistsException` are
 * exercised against moto's Cognito in admin-user-pool-moto.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { AdminCreateUserCommand, CognitoIdentityProviderClient, InternalErrorException, UsernameExistsException } from '@aws-sdk/client-cognito-identity-provider';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { mockClient } from 'aws-sdk-client-mock';
import { EXIT_CODES } from '../../infra/admin/command-frame';
import type { RunningService } from '../../infra/local/emulators';
import { ensureTable, startDynamoDb } from '../../infra/local/emulators';
import { admin, adminJson } from './helpers';

const POOL = 'eu-central-1_AbC123xyz';
const cognito = mockClient(CognitoIdentityProviderClient);

let dynamo: RunningService;
let env: Record<string, string>;

beforeAll(async () => {
  dynamo = await startDynamoDb();
  env = { DYNAMODB_ENDPOINT: dynamo.endpoint, TABLE_NAME: 'admin-user-pool-test' };
  const client = new DynamoDBClient({ region: 'us-east-1', endpoint: dynamo.endpoint });
  await ensureTable(client, env.TABLE_NAME!);
  client.destroy();
});
afterEach(() => {
  cognito.reset();
});
afterAll(async () => {
  cognito.restore();
  await dynamo.close();
});

const email = () => `${randomUUID()}@example.net`;

describe('user create with a user pool', () => {
  it('stores the user and creates them in the pool with a verified e-mail, invited by e-mail, in the pool\'s region', async () => {
    cognito.on(AdminCreateUserCommand).resolves({ User: { Username: 'sub-1' } });
    const address = email();
    const result = await adminJson(env, 'user', 'create', '--email', address, '--user-pool-id', POOL);
    expect(result).toEqual({ id: expect.any(String), userPool: 'invited' });

    const calls = cognito.commandCalls(AdminCreateUserCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.args[0].input).toEqual({
      UserPoolId: POOL,
      Username: address,
      UserAttributes: [
        { Name: 'email', Value: address },
        { Name: 'email_verified', Value: 'true' },
      ],
      DesiredDeliveryMediums: ['EMAIL'],
    });
    expect(await calls[0]!.thisValue.config.region()).toBe('eu-central-1');
    // The service user exists: its key can be generated as for any other.
    expect((await adminJson(env, 'key', 'generate', '--user', result.id)).key).toMatch(/^tme_/);
  });

  it('takes the pool from USER_POOL_ID, and says so in the human line', async () => {
    cognito.on(AdminCreateUserCommand).resolves({});
    const address = email();
    const result = await admin({ ...env, USER_POOL_ID: POOL }, 'user', 'create', '--email', address);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^User ${address} created with id [0-9a-f-]{36}, and invited by e-mail to the settings page\\n$`));
    expect(cognito.commandCalls(AdminCreateUserCommand)).toHaveLength(1);
  });

  it('makes no Cognito call without a pool', async () => {
    expect(await adminJson(env, 'user', 'create', '--email', email())).toEqual({ id: expect.any(String) });
    expect(cognito.commandCalls(AdminCreateUserCommand)).toHaveLength(0);
  });

  it('leaves a person already in the pool as they are', async () => {
    cognito.on(AdminCreateUserCommand).rejects(new UsernameExistsException({ message: 'User account already exists', $metadata: {} }));
    expect(await adminJson(env, 'user', 'create', '--email', email(), '--user-pool-id', POOL)).toEqual({ id: expect.any(String), userPool: 'existing' });
  });

  it('refuses a malformed pool id before storing anything (1)', async () => {
    const address = email();
    const result = await admin(env, 'user', 'create', '--email', address, '--user-pool-id', 'not-a-pool');
    expect(result.code).toBe(EXIT_CODES.invalid);
    expect(result.stderr).toMatch(/"not-a-pool" is not a Cognito user pool id/);
    // The address is still free: nothing was stored.
    expect(await adminJson(env, 'user', 'create', '--email', address)).toEqual({ id: expect.any(String) });
  });

  it('when the pool refuses, says the user was stored, with its id and the command that finishes the job (5)', async () => {
    cognito.on(AdminCreateUserCommand).rejects(new InternalErrorException({ message: 'try later', $metadata: {} }));
    const address = email();
    const result = await admin(env, 'user', 'create', '--email', address, '--user-pool-id', POOL, '--json');
    expect(result.code).toBe(EXIT_CODES.unavailable);
    const { error } = JSON.parse(result.stderr) as { error: { code: string; message: string } };
    expect(error.code).toBe('user_pool_unavailable');
    const id = /created with id ([0-9a-f-]{36})/.exec(error.message)?.[1];
    expect(id).toBeDefined();
    expect(error.message).toContain(`InternalErrorException: try later`);
    expect(error.message).toContain(`user invite --user ${id}`);

    // That command finishes it.
    cognito.reset();
    cognito.on(AdminCreateUserCommand).resolves({});
    expect(await adminJson(env, 'user', 'invite', '--user', id!, '--user-pool-id', POOL)).toEqual({ id, userPool: 'invited' });
    expect(cognito.commandCalls(AdminCreateUserCommand)[0]!.args[0].input.Username).toBe(address);
  });
});

describe('user invite', () => {
  it('needs a pool (1) and an existing user (3)', async () => {
    const { id } = await adminJson(env, 'user', 'create', '--email', email());
    const noPool = await admin(env, 'user', 'invite', '--user', id);
    expect(noPool.code).toBe(EXIT_CODES.invalid);
    expect(noPool.stderr).toMatch(/--user-pool-id .* or USER_POOL_ID is required/);
    const missing = await admin(env, 'user', 'invite', '--user', randomUUID(), '--user-pool-id', POOL);
    expect(missing.code).toBe(EXIT_CODES.notFound);
    expect(cognito.commandCalls(AdminCreateUserCommand)).toHaveLength(0);
  });
});
