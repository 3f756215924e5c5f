/**
 * The admin CLI's Cognito user-pool path against moto_server's Cognito (moto 5) and dynalite:
 * `user create --user-pool-id` / `USER_POOL_ID` and `user invite` put the person in the pool with
 * a verified e-mail address (waiting for their first sign-in, as an invitation leaves them), in
 * the pool's own region; a person already there (`UsernameExistsException`) is left as they are;
 * a pool that does not exist is a refusal (exit 5) that names the command that finishes the job.
 * What moto cannot show (the invitation's delivery medium, an internal error) stays in
 * admin-user-pool.test.ts, with the client mocked.
 *
 * Needs `moto_server` (test/support/moto.ts: skipped on a laptop without it, a failure under CI).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { AdminCreateUserCommand, AdminGetUserCommand, CognitoIdentityProviderClient, CreateUserPoolCommand } from '@aws-sdk/client-cognito-identity-provider';
import { EXIT_CODES } from '../../infra/admin/command-frame';
import type { RunningService } from '../../infra/local/emulators';
import { ensureTable, startDynamoDb } from '../../infra/local/emulators';
import { describeWithMoto, startMoto } from '../support/moto';
import type { Moto } from '../support/moto';
import { admin, adminJson } from './helpers';

/** Not the default region: the CLI must call the region the pool id names. */
const POOL_REGION = 'eu-central-1';

describeWithMoto("the admin CLI's user pool (moto_server Cognito)", () => {
  let moto: Moto;
  let dynamo: RunningService;
  let cognito: CognitoIdentityProviderClient;
  let poolId: string;
  let env: Record<string, string>;
  const saved = process.env.AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER;

  beforeAll(async () => {
    [moto, dynamo] = await Promise.all([startMoto(), startDynamoDb()]);
    // The CLI builds its Cognito client itself; the SDK's own endpoint variable points it here.
    process.env.AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER = moto.config.endpoint;
    cognito = new CognitoIdentityProviderClient({ ...moto.config, region: POOL_REGION });
    poolId = (await cognito.send(new CreateUserPoolCommand({ PoolName: 'settings-page' }))).UserPool!.Id!;
    env = { DYNAMODB_ENDPOINT: dynamo.endpoint, TABLE_NAME: 'admin-user-pool-moto-test' };
    const client = new DynamoDBClient({ region: 'us-east-1', endpoint: dynamo.endpoint });
    await ensureTable(client, env.TABLE_NAME!);
    client.destroy();
  }, 30_000);

  afterAll(async () => {
    if (saved === undefined) delete process.env.AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER;
    else process.env.AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER = saved;
    cognito?.destroy();
    await Promise.all([moto?.stop(), dynamo?.close()]);
  });

  const email = () => `${randomUUID()}@example.net`;
  async function poolUser(address: string) {
    const user = await cognito.send(new AdminGetUserCommand({ UserPoolId: poolId, Username: address }));
    return { status: user.UserStatus, attributes: Object.fromEntries((user.UserAttributes ?? []).map((a) => [a.Name, a.Value])) };
  }

  it('user create --user-pool-id puts the person in the pool of its region, e-mail verified, invited', async () => {
    expect(poolId.startsWith(`${POOL_REGION}_`)).toBe(true);
    const address = email();
    expect(await adminJson(env, 'user', 'create', '--email', address, '--user-pool-id', poolId)).toEqual({ id: expect.any(String), userPool: 'invited' });
    expect(await poolUser(address)).toEqual({ status: 'FORCE_CHANGE_PASSWORD', attributes: expect.objectContaining({ email: address, email_verified: 'true' }) });
  });

  it('takes the pool from USER_POOL_ID', async () => {
    const address = email();
    const result = await admin({ ...env, USER_POOL_ID: poolId }, 'user', 'create', '--email', address);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/and invited by e-mail to the settings page\n$/);
    expect((await poolUser(address)).attributes.email).toBe(address);
  });

  it('leaves a person already in the pool as they are (UsernameExistsException)', async () => {
    const address = email();
    await cognito.send(new AdminCreateUserCommand({ UserPoolId: poolId, Username: address, UserAttributes: [{ Name: 'email', Value: address }, { Name: 'name', Value: 'Already Here' }], MessageAction: 'SUPPRESS' }));
    expect(await adminJson(env, 'user', 'create', '--email', address, '--user-pool-id', poolId)).toEqual({ id: expect.any(String), userPool: 'existing' });
    const { attributes } = await poolUser(address);
    expect(attributes.name).toBe('Already Here');
    expect(attributes.email_verified).toBeUndefined();
  });

  it('a pool that does not exist refuses (5) after the user was stored, naming the invite that finishes it; user invite then does', async () => {
    const missingPool = `${POOL_REGION}_${'Z'.repeat(9)}`;
    const address = email();
    const result = await admin(env, 'user', 'create', '--email', address, '--user-pool-id', missingPool, '--json');
    expect(result.code).toBe(EXIT_CODES.unavailable);
    const { error } = JSON.parse(result.stderr) as { error: { code: string; message: string } };
    expect(error.code).toBe('user_pool_unavailable');
    expect(error.message).toMatch(/ResourceNotFoundException/);
    const id = /created with id ([0-9a-f-]{36})/.exec(error.message)?.[1];
    expect(error.message).toContain(`user invite --user ${id}`);

    expect(await adminJson(env, 'user', 'invite', '--user', id!, '--user-pool-id', poolId)).toEqual({ id, userPool: 'invited' });
    expect((await poolUser(address)).attributes).toMatchObject({ email: address, email_verified: 'true' });
    // Invited again: already there.
    expect(await adminJson(env, 'user', 'invite', '--user', id!, '--user-pool-id', poolId)).toEqual({ id, userPool: 'existing' });
  });
});
