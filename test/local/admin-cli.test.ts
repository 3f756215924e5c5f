/**
 * The admin command line (CONTRACT section 8) through `runAdmin`, the code `npm run admin` runs,
 * against dynalite: each command's human line and `--json` object, and the exit code of each
 * kind of error.
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { generateApiKey, hashApiKey } from '../../functions/shared/domain/api-keys';
import { createDynamoDbClient } from '../../functions/shared/runtime/clients';
import { itemKey } from '../../functions/shared/store/table';
import { DAY_MS, clearOfTurn } from '../support/clock';
import { EXIT_CODES } from '../../infra/admin/command-frame';
import type { RunningService } from '../../infra/local/emulators';
import { ensureTable, startDynamoDb } from '../../infra/local/emulators';
import type { AdminResult } from './helpers';
import { admin, adminJson, freePort } from './helpers';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ABSENT = '00000000-0000-4000-8000-000000000000';

let dynamo: RunningService;
let env: Record<string, string>;

beforeAll(async () => {
  dynamo = await startDynamoDb();
  env = { DYNAMODB_ENDPOINT: dynamo.endpoint, TABLE_NAME: 'admin-cli-test' };
  const client = new DynamoDBClient({ region: 'us-east-1', endpoint: dynamo.endpoint });
  await ensureTable(client, env.TABLE_NAME!);
  client.destroy();
});
afterAll(async () => dynamo.close());

const run = (...argv: string[]) => admin(env, ...argv);

function expectFailure(result: AdminResult, exitCode: number, message: RegExp): void {
  expect(result.code).toBe(exitCode);
  expect(result.stdout).toBe('');
  expect(result.stderr).toMatch(message);
}

async function newOrg(): Promise<string> {
  return (await adminJson(env, 'org', 'create', '--name', 'Acme')).id as string;
}
async function newUser(): Promise<string> {
  return (await adminJson(env, 'user', 'create', '--email', `${randomUUID()}@example.net`)).id as string;
}

describe('org create', () => {
  it('prints {"id"} with --json and a human line naming the id otherwise', async () => {
    const json = await adminJson(env, 'org', 'create', '--name', 'Acme');
    expect(json).toEqual({ id: expect.stringMatching(UUID) });
    const human = await run('org', 'create', '--name', 'Globex');
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(new RegExp(`^Organization "Globex" created with id ${UUID.source.slice(1, -1)}\\n$`));
  });

  it('takes --id in any case and stores it canonical; a taken id is a conflict (4)', async () => {
    const id = randomUUID();
    expect(await adminJson(env, 'org', 'create', '--name', 'Initech', '--id', id.toUpperCase())).toEqual({ id });
    expectFailure(await run('org', 'create', '--name', 'Again', '--id', id), EXIT_CODES.conflict, /^error: .*already exists\n$/);
  });

  it('refuses a malformed id (1) and a missing --name (1)', async () => {
    expectFailure(await run('org', 'create', '--name', 'X', '--id', 'not-a-uuid'), EXIT_CODES.invalid, /must be a UUID/);
    expectFailure(await run('org', 'create'), EXIT_CODES.invalid, /required option '--name <name>' not specified/);
  });

  it('answers a usage error with one JSON object under --json, as every other error', async () => {
    for (const argv of [['org', 'create', '--json'], ['--json', 'org', 'create', '--name', 'X', '--bogus'], ['--json', 'org', 'nonsense'], ['--json', 'org']]) {
      const result = await run(...argv);
      expect([result.code, result.stdout]).toEqual([EXIT_CODES.invalid, '']);
      expect(result.stderr.endsWith('\n')).toBe(true);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(JSON.parse(result.stderr)).toEqual({ error: { code: 'usage', message: expect.stringMatching(/(required option|unknown option|unknown command|a command is missing).*\(add --help for usage\)$/) } });
    }
    // "--json" after "--" is an operand, not the option: the error stays commander's text.
    expectFailure(await run('org', 'create', '--name', 'X', '--', '--json'), EXIT_CODES.invalid, /^error: too many arguments/);
  });
});

describe('user create', () => {
  it('prints {"id"} with --json; a human line otherwise', async () => {
    expect(await adminJson(env, 'user', 'create', '--email', `${randomUUID()}@example.net`)).toEqual({ id: expect.stringMatching(UUID) });
    const human = await run('user', 'create', '--email', 'grace@example.net');
    expect(human).toMatchObject({ code: 0, stderr: '' });
    expect(human.stdout).toMatch(/^User grace@example\.net created with id [0-9a-f-]{36}\n$/);
  });

  it('refuses a taken email (4) and an invalid one (1)', async () => {
    await adminJson(env, 'user', 'create', '--email', 'ada@example.net');
    expectFailure(await run('user', 'create', '--email', 'ada@example.net'), EXIT_CODES.conflict, /already exists/);
    expectFailure(await run('user', 'create', '--email', 'not an address'), EXIT_CODES.invalid, /not a valid email address/);
  });
});

describe('member add / remove', () => {
  it('adds and removes, printing the membership as JSON', async () => {
    const [org, user] = [await newOrg(), await newUser()];
    expect(await adminJson(env, 'member', 'add', '--org', org, '--user', user)).toEqual({ organizationId: org, userId: user, member: true });
    expect(await adminJson(env, 'member', 'remove', '--org', org, '--user', user)).toEqual({ organizationId: org, userId: user, member: false });
    const human = await run('member', 'add', '--org', org, '--user', user);
    expect(human.stdout).toBe(`User ${user} is now a member of Organization ${org}\n`);
  });

  it('reports an unknown user or Organization, or a missing membership, as not found (3)', async () => {
    const [org, user] = [await newOrg(), await newUser()];
    expectFailure(await run('member', 'add', '--org', org, '--user', ABSENT), EXIT_CODES.notFound, /no user with id/);
    expectFailure(await run('member', 'add', '--org', ABSENT, '--user', user), EXIT_CODES.notFound, /no Organization with id/);
    expectFailure(await run('member', 'remove', '--org', org, '--user', user), EXIT_CODES.notFound, /is not a member/);
  });

  it('refuses a malformed id (1)', async () => {
    expectFailure(await run('member', 'add', '--org', 'acme', '--user', ABSENT), EXIT_CODES.invalid, /must be a UUID/);
  });
});

describe('sender add / remove', () => {
  it('stores a domain lower-cased and an exact address, and prints them', async () => {
    const org = await newOrg();
    // Locally an identity counts as verified at once; the DKIM records are what AWS would need (sender-identities.test.ts covers SES).
    const verified = { created: false, verified: true, verificationStatus: 'SUCCESS' };
    const dkim = [1, 2, 3].map((n) => ({ name: `<token${n}>._domainkey.example.com`, type: 'CNAME', value: `<token${n}>.dkim.amazonses.com` }));
    expect(await adminJson(env, 'sender', 'add', '--org', org, '--domain', 'Example.COM')).toEqual({
      organizationId: org,
      sender: 'example.com',
      type: 'domain',
      allowed: true,
      identity: { ...verified, dkimStatus: 'SUCCESS' },
      records: dkim,
    });
    expect(await adminJson(env, 'sender', 'add', '--org', org, '--address', 'Billing@Acme.test')).toEqual({
      organizationId: org,
      sender: 'billing@acme.test',
      type: 'address',
      allowed: true,
      identity: { ...verified, dkimStatus: null },
      records: [],
    });
    expect(await adminJson(env, 'sender', 'remove', '--org', org, '--domain', 'example.com')).toMatchObject({ sender: 'example.com', allowed: false });
    expect((await run('sender', 'remove', '--org', org, '--address', 'billing@acme.test')).stdout).toBe(
      `Organization ${org} may no longer send from billing@acme.test\n`,
    );
  });

  it('needs exactly one of --domain and --address (1), a real domain (1), a known Organization (3)', async () => {
    const org = await newOrg();
    expectFailure(await run('sender', 'add', '--org', org), EXIT_CODES.invalid, /one of --domain D or --address A is required/);
    expectFailure(await run('sender', 'add', '--org', org, '--domain', 'a.test', '--address', 'x@a.test'), EXIT_CODES.invalid, /cannot be used with/);
    expectFailure(await run('sender', 'add', '--org', org, '--domain', 'not a domain'), EXIT_CODES.invalid, /is not a domain name/);
    expectFailure(await run('sender', 'add', '--org', ABSENT, '--domain', 'a.test'), EXIT_CODES.notFound, /no Organization/);
    expectFailure(await run('sender', 'remove', '--org', org, '--domain', 'never-added.test'), EXIT_CODES.notFound, /is not a sender identity/);
  });
});

describe('key generate / rotate / show / revoke', () => {
  it('goes through a key lifecycle, printing the plain key only when it is made', async () => {
    const user = await newUser();
    const outputs: string[] = [];
    const step = async (...argv: string[]) => {
      const result = await run(...argv);
      outputs.push(result.stdout, result.stderr);
      return result;
    };

    const generated = await step('key', 'generate', '--user', user, '--json');
    const { key } = JSON.parse(generated.stdout) as { key: string };
    expect(JSON.parse(generated.stdout)).toEqual({ key: expect.stringMatching(/^tme_[0-9A-Za-z]{49}$/) });

    expectFailure(await step('key', 'generate', '--user', user), EXIT_CODES.conflict, /already has a key; use "key rotate"/);

    const shown = await step('key', 'show', '--user', user, '--json');
    expect(JSON.parse(shown.stdout)).toEqual({
      userId: user,
      masked: `tme_…${key.slice(-4)}`,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      scopes: null,
      senders: null,
      expiresAt: null,
      lastUsedAt: null,
      test: false,
    });
    expect((await step('key', 'show', '--user', user)).stdout).toMatch(
      new RegExp(`^User ${user} has key tme_…${key.slice(-4)}, created \\S+; scopes all; senders all of the Organization's; never expires; last used never\\n$`),
    );

    const rotated = await step('key', 'rotate', '--user', user);
    const newKey = /(tme_[0-9A-Za-z]{49})\n$/.exec(rotated.stdout)?.[1];
    expect(newKey).toBeDefined();
    expect(newKey).not.toBe(key);
    expect(rotated.stdout).toMatch(/^New API key for user .* the old one stops working within AUTH_CACHE_SECONDS/);
    expect(JSON.parse((await step('key', 'show', '--user', user, '--json')).stdout).masked).toBe(`tme_…${newKey!.slice(-4)}`);

    expect(await step('key', 'revoke', '--user', user, '--json')).toMatchObject({ code: 0, stdout: `${JSON.stringify({ userId: user, revoked: true, cancelledSchedules: 0 })}\n` });
    expectFailure(await step('key', 'show', '--user', user), EXIT_CODES.notFound, /has no key/);
    expectFailure(await step('key', 'revoke', '--user', user), EXIT_CODES.notFound, /has no key/);
    expectFailure(await step('key', 'rotate', '--user', user), EXIT_CODES.notFound, /use "key generate"/);

    // Each plain key appeared in exactly one output: the one that created it.
    const all = outputs.join('\n');
    expect(all.split(key).length - 1).toBe(1);
    expect(all.split(newKey!).length - 1).toBe(1);
  });

  it('rotate prints {"key"} with --json', async () => {
    const user = await newUser();
    await adminJson(env, 'key', 'generate', '--user', user);
    expect(await adminJson(env, 'key', 'rotate', '--user', user)).toEqual({ key: expect.stringMatching(/^tme_/) });
  });

  it('reports an unknown user (3) and a malformed id (1)', async () => {
    expectFailure(await run('key', 'generate', '--user', ABSENT), EXIT_CODES.notFound, /no user with id/);
    expectFailure(await run('key', 'show', '--user', '42'), EXIT_CODES.invalid, /must be a UUID/);
  });
});

describe('output and errors', () => {
  it('with --json, an error is one JSON object on stderr', async () => {
    const result = await run('key', 'show', '--user', ABSENT, '--json');
    expect(result.code).toBe(EXIT_CODES.notFound);
    expect(result.stdout).toBe('');
    expect(JSON.parse(result.stderr)).toEqual({ error: { code: 'not_found', message: `no user with id ${ABSENT}` } });
  });

  it('accepts --json before the command too', async () => {
    const result = await run('--json', 'org', 'create', '--name', 'Early');
    expect(JSON.parse(result.stdout)).toEqual({ id: expect.stringMatching(UUID) });
  });

  it.each([
    ['template list'],
    ['template show', '--name', 'welcome'],
    ['template delete', '--name', 'welcome'],
    ['schedule list'],
    ['user list'],
    ['sender list'],
    ['org show'],
  ])('answers %s for an Organization that does not exist with exit 3, naming it', async (command, ...options) => {
    expectFailure(await run(...command.split(' '), '--org', ABSENT, ...options), EXIT_CODES.notFound, new RegExp(`no Organization with id ${ABSENT}`));
  });

  it('checks its arguments before it looks for the Organization: a bad --name or --version is exit 1 whatever --org names', async () => {
    expectFailure(await run('template', 'show', '--org', ABSENT, '--name', 'bad name'), EXIT_CODES.invalid, /name/);
    expectFailure(await run('template', 'show', '--org', ABSENT, '--name', 'welcome', '--version', '0'), EXIT_CODES.invalid, /version/);
    expectFailure(await run('template', 'delete', '--org', ABSENT, '--name', 'bad name'), EXIT_CODES.invalid, /name/);
  });

  const levels = [[], ['org'], ['user'], ['member'], ['sender'], ['key'], ['org', 'create'], ['user', 'create'], ['member', 'remove'], ['sender', 'add'], ['key', 'show']];
  it.each(levels.map((path) => [path.join(' ') || '(top level)', path] as const))(
    'prints help for %s on stdout and exits 0',
    async (_name, path) => {
      const result = await run(...path, '--help');
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout).toContain(`Usage: npm run --silent admin -- ${path.join(' ')}`.trimEnd());
      expect(result.stdout).toContain('--json');
    },
  );

  it('shows usage and exits 1 without a command or with an unknown one', async () => {
    const none = await run();
    expect(none.code).toBe(EXIT_CODES.invalid);
    expect(none.stderr).toContain('Usage: npm run --silent admin --');
    expectFailure(await run('orgs', 'create'), EXIT_CODES.invalid, /unknown command 'orgs'/);
  });

  it('exits 5 naming "npm start" when the local DynamoDB is not running', async () => {
    const result = await admin({ DYNAMODB_PORT: String(await freePort()) }, 'org', 'create', '--name', 'Nowhere');
    expectFailure(result, EXIT_CODES.unavailable, /cannot reach the local DynamoDB at http:\/\/127\.0\.0\.1:\d+: start the local stack with "npm start"/);
  });

  it('exits 5 when the table does not exist', async () => {
    const result = await admin({ ...env, TABLE_NAME: 'no-such-table' }, 'org', 'create', '--name', 'Nowhere', '--json');
    expect(result.code).toBe(EXIT_CODES.unavailable);
    expect(JSON.parse(result.stderr).error.message).toMatch(/table "no-such-table" does not exist/);
  });

  it('exits 1 for a malformed DYNAMODB_PORT', async () => {
    expectFailure(await admin({ DYNAMODB_PORT: 'eighty' }, 'org', 'create', '--name', 'X'), EXIT_CODES.invalid, /DYNAMODB_PORT must be a port number/);
  });

  it('--table NAME targets that table (here through DYNAMODB_ENDPOINT), not the local default', async () => {
    const client = new DynamoDBClient({ region: 'us-east-1', endpoint: dynamo.endpoint });
    await ensureTable(client, 'deployed-table');
    client.destroy();
    const target = { DYNAMODB_ENDPOINT: dynamo.endpoint };
    const { id } = await adminJson(target, 'org', 'create', '--name', 'Deployed', '--table', 'deployed-table');
    expect(await admin(target, 'member', 'add', '--org', id, '--user', ABSENT, '--table', 'deployed-table')).toMatchObject({
      code: EXIT_CODES.notFound,
    });
    // The local default table has no such Organization.
    const local = await admin({ ...target, TABLE_NAME: env.TABLE_NAME }, 'sender', 'add', '--org', id, '--domain', 'a.test');
    expectFailure(local, EXIT_CODES.notFound, /no Organization/);
  });
});

describe('key sweep', () => {
  it('removes a key item its user does not hold, prints how many, and keeps the held key', async () => {
    const user = await newUser();
    const { key } = await adminJson(env, 'key', 'generate', '--user', user);
    const documents = createDynamoDbClient({ region: 'us-east-1', dynamodbEndpoint: dynamo.endpoint });
    const orphan = itemKey.apiKey(hashApiKey(generateApiKey()));
    await documents.send(new PutCommand({ TableName: env.TABLE_NAME, Item: { ...orphan, userId: user, createdAt: '2020-01-01T00:00:00.000Z' } }));

    const swept = await adminJson(env, 'key', 'sweep');
    expect(swept.removed).toBeGreaterThanOrEqual(1);
    expect((await documents.send(new GetCommand({ TableName: env.TABLE_NAME, Key: orphan }))).Item).toBeUndefined();
    expect((await documents.send(new GetCommand({ TableName: env.TABLE_NAME, Key: itemKey.apiKey(hashApiKey(String(key))) }))).Item).toBeDefined();
    expect((await run('key', 'sweep')).stdout).toMatch(/^Removed \d+ key items? no user holds\n$/);
    documents.destroy();
  });
});

describe('org show and org resume', () => {
  it('shows a new Organization unpaused with an empty window, as JSON and as lines', async () => {
    await clearOfTurn(DAY_MS, 15_000);
    const id = await newOrg();
    expect(await adminJson(env, 'org', 'show', '--org', id)).toEqual({
      id,
      name: 'Acme',
      members: [],
      senders: [],
      limits: { rate: null, daily: null, weight: 1, scheduled: 10_000 },
      usage: { day: new Date().toISOString().slice(0, 10), used: 0, remaining: null },
      tracking: { opens: false, clicks: false },
      paused: false,
      pausedAt: null,
      pausedReason: null,
      reputation: { windowDays: 7, sends: 0, hardBounces: 0, complaints: 0, bounceRate: 0, complaintRate: 0 },
    });
    const human = await run('org', 'show', '--org', id);
    expect(human.stdout).toBe(
      [`Organization "Acme" (${id})`, '  members: none', '  senders: none', '  limits: no rate of its own, no daily quota, weight 1', "  today: not counted (today's use is counted only while a daily quota is set)", '  tracking (default for messages without Tracking): opens off, clicks off', '  reputation (last 7 days): 0 recipients sent, hard bounces 0 (0 %), complaints 0 (0 %)', '  sending: not paused', ''].join('\n'),
    );
    expect(await adminJson(env, 'org', 'resume', '--org', id)).toEqual({ organizationId: id, paused: false, wasPaused: false });
  });

  it('answers not found (3) for an unknown Organization and invalid (1) for a malformed id', async () => {
    expectFailure(await run('org', 'show', '--org', ABSENT), EXIT_CODES.notFound, /no Organization with id/);
    expectFailure(await run('org', 'resume', '--org', ABSENT), EXIT_CODES.notFound, /no Organization with id/);
    expectFailure(await run('org', 'show', '--org', 'nope'), EXIT_CODES.invalid, /must be a UUID/);
  });
});

describe('org tracking', () => {
  it('sets the default switch by switch, keeps the other, prints it with no option, and org show shows it', async () => {
    const id = await newOrg();
    expect(await adminJson(env, 'org', 'tracking', '--org', id)).toEqual({ organizationId: id, opens: false, clicks: false });
    expect(await adminJson(env, 'org', 'tracking', '--org', id.toUpperCase(), '--opens', 'on')).toEqual({ organizationId: id, opens: true, clicks: false });
    const human = await run('org', 'tracking', '--org', id, '--clicks', 'ON');
    expect(human).toMatchObject({ code: 0, stdout: `Organization ${id}: by default opens on, clicks on\n` });
    expect(await adminJson(env, 'org', 'tracking', '--org', id, '--opens', 'off')).toEqual({ organizationId: id, opens: false, clicks: true });
    expect((await adminJson(env, 'org', 'show', '--org', id)).tracking).toEqual({ opens: false, clicks: true });
    expect((await run('org', 'show', '--org', id)).stdout).toContain('\n  tracking (default for messages without Tracking): opens off, clicks on\n');
  });

  it('refuses an unknown value or a missing --org (1) and an unknown Organization (3), changing nothing', async () => {
    const id = await newOrg();
    await adminJson(env, 'org', 'tracking', '--org', id, '--opens', 'on');
    expectFailure(await run('org', 'tracking', '--org', id, '--opens', 'off', '--clicks', 'yes'), EXIT_CODES.invalid, /--clicks must be on or off, got "yes"/);
    expectFailure(await run('org', 'tracking', '--org', id, '--opens', 'true'), EXIT_CODES.invalid, /--opens must be on or off/);
    expectFailure(await run('org', 'tracking', '--org', id, '--opens'), EXIT_CODES.invalid, /--opens/);
    expectFailure(await run('org', 'tracking', '--opens', 'on'), EXIT_CODES.invalid, /--org/);
    expectFailure(await run('org', 'tracking', '--org', ABSENT, '--opens', 'on'), EXIT_CODES.notFound, /no Organization with id/);
    expectFailure(await run('org', 'tracking', '--org', ABSENT, '--opens', 'maybe'), EXIT_CODES.invalid, /--opens must be on or off/);
    expect(await adminJson(env, 'org', 'tracking', '--org', id)).toEqual({ organizationId: id, opens: true, clicks: false });
  });

  it('explains itself in --help', async () => {
    const help = await run('org', 'tracking', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--opens <on\|off>/);
    expect(help.stdout).toMatch(/--clicks <on\|off>/);
    expect(help.stdout).toMatch(/Off unless set/);
  });
});
