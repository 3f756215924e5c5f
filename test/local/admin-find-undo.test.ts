/**
 * Find and undo with the admin command line (CONTRACT section 16 item 3), through `runAdmin`, on
 * two targets: the local stack's table (dynalite) and a deployed one (`--table`), played by
 * moto_server's DynamoDB and Cognito. The deployed run needs `moto_server` on the PATH; without it
 * that half is skipped (under CI=true it fails instead, see test/support/moto.ts).
 */
import { randomUUID } from 'node:crypto';
import { AdminGetUserCommand, CognitoIdentityProviderClient, CreateUserPoolCommand, UserNotFoundException } from '@aws-sdk/client-cognito-identity-provider';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { hashApiKey } from '../../functions/shared/domain/api-keys';
import { DynamoDbScheduleStore } from '../../functions/shared/schedules/schedule-store';
import { itemKey } from '../../functions/shared/store/table';
import { EXIT_CODES } from '../../infra/admin/command-frame';
import type { RunningService } from '../../infra/local/emulators';
import { ensureTable, startDynamoDb } from '../../infra/local/emulators';
import type { Moto } from '../support/moto';
import { describeWithMoto, startMoto } from '../support/moto';
import { writePendingSchedule } from '../support/pending-schedules';
import { admin, adminJson } from './helpers';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

interface Target {
  /** The environment and leading options of every command. */
  readonly env: Record<string, string>;
  readonly options: readonly string[];
  readonly documents: DynamoDBDocumentClient;
  readonly tableName: string;
  /** The deployed target's Cognito user pool, when it has one. */
  readonly userPool?: { readonly id: string; readonly client: CognitoIdentityProviderClient };
}

/** A pending scheduled message as the send path stores it. */
const schedule = (target: Target, organizationId: string, userId: string, keyHash?: string) =>
  writePendingSchedule(target.documents, target.tableName, { organizationId, userId, ...(keyHash && { keyHash }) });

/** The find-and-undo behaviour, the same on either target. */
function findAndUndo(target: () => Target): void {
  const run = (...argv: string[]) => admin(target().env, ...target().options, ...argv);
  const json = (...argv: string[]) => adminJson(target().env, ...target().options, ...argv);
  const newOrg = async (name = 'Acme') => (await json('org', 'create', '--name', name)).id as string;
  const newUser = async (email = `${randomUUID()}@example.net`) => (await json('user', 'create', '--email', email)).id as string;

  it('org list prints every Organization with its members and senders', async () => {
    const first = await newOrg('Initech');
    const second = await newOrg('Globex');
    const member = await newUser();
    await json('member', 'add', '--org', first, '--user', member);
    await json('sender', 'add', '--org', first, '--domain', 'initech.example');
    const { organizations } = await json('org', 'list');
    expect(organizations).toEqual(expect.arrayContaining([{ id: first, name: 'Initech', members: [member], senders: ['initech.example'] }, { id: second, name: 'Globex', members: [], senders: [] }]));
    const human = await run('org', 'list');
    expect(human).toMatchObject({ code: 0, stderr: '' });
    expect(human.stdout).toMatch(new RegExp(`^\\d+ Organizations\\n`));
    expect(human.stdout).toContain(`  ${first}  "Initech"  1 member, senders: initech.example\n`);
    expect(human.stdout).toContain(`  ${second}  "Globex"  0 members, senders: none\n`);
  });

  it('user list prints every user, or with --org the members of one Organization', async () => {
    const org = await newOrg();
    const inside = await newUser(`in-${randomUUID()}@example.net`);
    const outside = await newUser(`out-${randomUUID()}@example.net`);
    await json('member', 'add', '--org', org, '--user', inside);
    const all = (await json('user', 'list')).users as { id: string }[];
    expect(all.map((u) => u.id)).toEqual(expect.arrayContaining([inside, outside]));
    const members = await json('user', 'list', '--org', org);
    expect(members).toEqual({ users: [{ id: inside, email: expect.stringMatching(/^in-/) }] });
    const human = await run('user', 'list', '--org', org);
    expect(human.stdout).toMatch(new RegExp(`^1 user in Organization ${org}\\n  ${inside}  in-.+@example\\.net\\n$`));
    expect((await run('user', 'list', '--org', randomUUID())).code).toBe(EXIT_CODES.notFound);
  });

  it('user show finds a user by id or by e-mail (any case), with its Organizations and its key masked', async () => {
    const email = `show-${randomUUID()}@example.net`;
    const id = await newUser(email);
    const org = await newOrg();
    await json('member', 'add', '--org', org, '--user', id);
    const { key } = await json('key', 'generate', '--user', id);
    const shown = await json('user', 'show', '--email', email.toUpperCase());
    expect(shown).toEqual({ id, email, organizations: [org], key: { masked: expect.stringMatching(/^tme_…/), createdAt: expect.any(String) } });
    expect(shown.key.masked.endsWith(String(key).slice(-4))).toBe(true);
    expect(await json('user', 'show', '--user', id)).toEqual(shown);
    const human = await run('user', 'show', '--user', id);
    expect(human.stdout).toBe(`User ${email} (${id})\n  organizations: ${org}\n  key: ${shown.key.masked}, created ${shown.key.createdAt}\n`);
    expect(JSON.stringify(human)).not.toContain(key);

    expect((await run('user', 'show', '--email', `nobody-${randomUUID()}@example.net`)).code).toBe(EXIT_CODES.notFound);
    expect((await run('user', 'show')).code).toBe(EXIT_CODES.invalid);
    expect((await run('user', 'show', '--user', id, '--email', email)).code).toBe(EXIT_CODES.invalid);
  });

  it('user create for an e-mail that exists exits 4 and prints the existing id', async () => {
    const email = `taken-${randomUUID()}@example.net`;
    const id = await newUser(email);
    const again = await run('user', 'create', '--email', email.toUpperCase(), '--json');
    expect(again.code).toBe(EXIT_CODES.conflict);
    expect(again.stdout).toBe('');
    expect(JSON.parse(again.stderr)).toEqual({ error: { code: 'conflict', message: expect.stringContaining(id) }, id });
    const human = await run('user', 'create', '--email', email);
    expect(human).toMatchObject({ code: EXIT_CODES.conflict, stdout: '' });
    expect(human.stderr).toBe(`error: a user with email ${email} already exists, with id ${id}\n`);
  });

  it('user delete revokes its key, cancels the messages it scheduled, ends its memberships and frees its e-mail address', async () => {
    const email = `gone-${randomUUID()}@example.net`;
    const id = await newUser(email);
    const org = await newOrg();
    await json('member', 'add', '--org', org, '--user', id);
    const { key } = await json('key', 'generate', '--user', id);
    const keyItem = (await json('user', 'show', '--user', id)).key;
    expect(keyItem).not.toBeNull();

    const keyHash = hashApiKey(String(key));
    const made = await schedule(target(), org, id, keyHash);

    const deleted = await json('user', 'delete', '--user', id);
    expect(deleted).toEqual({ id, email, deleted: true, keyRevoked: true, cancelledSchedules: [made], noticeAt: 'send time', organizations: [org], userPool: target().userPool ? 'removed' : null });
    expect((await target().documents.send(new GetCommand({ TableName: target().tableName, Key: itemKey.schedule(made) }))).Item?.state).toBe('Cancelled');
    expect((await run('user', 'show', '--user', id)).code).toBe(EXIT_CODES.notFound);
    expect((await json('org', 'show', '--org', org)).members).toEqual([]);
    // The key's own item is gone, so the key authenticates nobody.
    const { Item } = await target().documents.send(new GetCommand({ TableName: target().tableName, Key: itemKey.apiKey(keyHash) }));
    expect(Item).toBeUndefined();
    // The address is free again.
    expect(await newUser(email)).not.toBe(id);
    expect((await run('user', 'delete', '--user', id)).code).toBe(EXIT_CODES.notFound);

    const human = await run('user', 'delete', '--user', await newUser());
    const fromPool = target().userPool ? ', removed from the user pool' : '';
    expect(human.stdout).toMatch(new RegExp(`^User .+@example\\.net \\(${UUID}\\) deleted${fromPool}\\n$`));
  });

  it('org delete is refused while the Organization has members, pending schedules or senders, and --force removes them', async () => {
    const org = await newOrg();
    const member = await newUser();
    await json('member', 'add', '--org', org, '--user', member);
    await json('sender', 'add', '--org', org, '--domain', 'acme.example');
    const scheduleId = await schedule(target(), org, member);

    const refused = await run('org', 'delete', '--org', org);
    expect(refused).toMatchObject({ code: EXIT_CODES.conflict, stdout: '' });
    expect(refused.stderr).toBe(`error: Organization ${org} still has 1 member, 1 pending scheduled message, 1 sender identity; remove them first, or pass --force to remove them with it\n`);
    expect((await json('org', 'show', '--org', org)).members).toEqual([member]);

    const forced = await json('org', 'delete', '--org', org, '--force');
    expect(forced).toEqual({ id: org, deleted: true, members: [member], cancelledSchedules: [scheduleId], noticeAt: 'none', senders: ['acme.example'], tenantDeleted: false });
    expect((await run('org', 'show', '--org', org)).code).toBe(EXIT_CODES.notFound);
    const { Item } = await target().documents.send(new GetCommand({ TableName: target().tableName, Key: itemKey.schedule(scheduleId) }));
    expect(Item?.state).toBe('Cancelled');
    // Owing nobody a notice: an Organization made again with this id must not hear of it at its time.
    expect(Item?.noticeOwed).toBeUndefined();
    expect(await new DynamoDbScheduleStore(target().documents, target().tableName).organizations.list(org)).toEqual([]);
    // The member is a user still, in no Organization.
    expect((await json('user', 'show', '--user', member)).organizations).toEqual([]);

    const empty = await newOrg();
    expect((await run('org', 'delete', '--org', empty)).stdout).toBe(`Organization ${empty} deleted\n`);
    expect((await run('org', 'delete', '--org', empty)).code).toBe(EXIT_CODES.notFound);
  });

  it('each command has --help', async () => {
    for (const command of [['org', 'list'], ['org', 'delete'], ['user', 'list'], ['user', 'show'], ['user', 'delete'], ['sender', 'list']]) {
      const help = await run(...command, '--help');
      expect(help.code).toBe(0);
      expect(help.stdout).toContain(`Usage: npm run --silent admin -- ${command.join(' ')}`);
    }
  });
}

describe('find and undo on the local stack (dynalite)', () => {
  let dynamo: RunningService;
  let target: Target;
  beforeAll(async () => {
    dynamo = await startDynamoDb();
    const client = new DynamoDBClient({ region: 'us-east-1', endpoint: dynamo.endpoint });
    await ensureTable(client, 'find-undo-local');
    target = { env: { DYNAMODB_ENDPOINT: dynamo.endpoint, TABLE_NAME: 'find-undo-local' }, options: [], documents: DynamoDBDocumentClient.from(client), tableName: 'find-undo-local' };
  });
  afterAll(async () => {
    target?.documents.destroy();
    await dynamo?.close();
  });
  findAndUndo(() => target);
});

describeWithMoto('find and undo on a deployed table and user pool (moto_server)', () => {
  let moto: Moto;
  let target: Target;
  beforeAll(async () => {
    moto = await startMoto();
    const client = new DynamoDBClient(moto.config);
    await ensureTable(client, 'find-undo-deployed');
    const cognito = new CognitoIdentityProviderClient(moto.config);
    const { UserPool } = await cognito.send(new CreateUserPoolCommand({ PoolName: 'settings' }));
    target = {
      env: { DYNAMODB_ENDPOINT: moto.config.endpoint, AWS_REGION: moto.config.region, AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER: moto.config.endpoint, USER_POOL_ID: UserPool!.Id! },
      options: ['--table', 'find-undo-deployed'],
      documents: DynamoDBDocumentClient.from(client),
      tableName: 'find-undo-deployed',
      userPool: { id: UserPool!.Id!, client: cognito },
    };
  }, 30_000);
  afterAll(async () => {
    target?.documents.destroy();
    target?.userPool?.client.destroy();
    await moto?.stop();
  });
  findAndUndo(() => target);

  it('user delete also deletes the Cognito user of the settings page', async () => {
    const email = `pool-${randomUUID()}@example.net`;
    const created = await adminJson(target.env, ...target.options, 'user', 'create', '--email', email);
    expect(created).toEqual({ id: expect.any(String), userPool: 'invited' });
    const pool = target.userPool!;
    expect((await pool.client.send(new AdminGetUserCommand({ UserPoolId: pool.id, Username: email }))).Username).toBeDefined();
    const deleted = await adminJson(target.env, ...target.options, 'user', 'delete', '--user', created.id);
    expect(deleted).toMatchObject({ id: created.id, deleted: true, userPool: 'removed' });
    await expect(pool.client.send(new AdminGetUserCommand({ UserPoolId: pool.id, Username: email }))).rejects.toBeInstanceOf(UserNotFoundException);
    const human = await admin(target.env, ...target.options, 'user', 'delete', '--user', (await adminJson(target.env, ...target.options, 'user', 'create', '--email', `p-${randomUUID()}@example.net`)).id);
    expect(human.stdout).toMatch(/deleted, removed from the user pool\n$/);
  });
});
