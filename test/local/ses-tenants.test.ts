/**
 * SES tenants on a laptop (CONTRACT section 11 item 4) with SES_TENANTS=true, the local stack and
 * the admin command line both pointed (SES_ENDPOINT) at a recording proxy in front of the SES
 * emulator: one CreateTenant per Organization with the reputation policy and the configuration
 * set (and its three tracked siblings), an association per sender (and its removal), `TenantName` on every SendEmail, distinct
 * per Organization; `org tenants sync` gives an Organization made without tenants its own; with
 * tenants off nothing of it happens.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { RunningService } from '../../infra/local/emulators';
import { startSesEmulator } from '../../infra/local/emulators';
import type { RecordingSesProxy } from '../support/recording-ses-proxy';
import { startRecordingSesProxy } from '../support/recording-ses-proxy';
import { EXIT_CODES } from '../../infra/admin/command-frame';
import type { TestStack } from './helpers';
import { admin, adminEnv, adminJson, messageBody, provisionTenant, send, startTestStack } from './helpers';

let emulator: RunningService;
let proxy: RecordingSesProxy;
let stack: TestStack;
let env: Record<string, string>;
const CONFIGURATION_SET = 'email-send-api-local';
const arn = (resource: string) => `arn:aws:ses:us-east-1:123456789012:${resource}`;
/** The base set and the tracked ones named after it (functions/shared/mail/tracking.ts), as every tenant gets them. */
const CONFIGURATION_SETS = ['', '-track-opens', '-track-clicks', '-track-opens-clicks'].map((suffix) => arn(`configuration-set/${CONFIGURATION_SET}${suffix}`));

beforeAll(async () => {
  emulator = await startSesEmulator({ port: 0 });
  proxy = await startRecordingSesProxy(emulator.endpoint);
  stack = await startTestStack({ sesEndpoint: proxy.endpoint, region: 'us-east-1', serviceEnv: { SES_TENANTS: 'true' } });
  env = { ...adminEnv(stack), SES_TENANTS: 'true', SES_ENDPOINT: proxy.endpoint, SES_CONFIGURATION_SET: CONFIGURATION_SET };
});
afterAll(async () => {
  await stack?.stop();
  await proxy?.close();
  await emulator?.close();
});

const callsFor = (operation: string) => proxy.calls.filter((_, i) => proxy.operations()[i] === operation);

describe('with SES_TENANTS=true', () => {
  it('gives the demo Organization seeded by the stack its tenant and its sender at start', () => {
    const tenantName = `org-${stack.demo!.organizationId}`;
    expect(callsFor('CreateTenant').filter((call) => call.body.TenantName === tenantName)).toHaveLength(1);
    expect(callsFor('CreateTenantResourceAssociation').filter((call) => call.body.TenantName === tenantName).map((call) => call.body.ResourceArn)).toEqual([
      arn(`identity/${stack.demo!.senderDomain}`),
    ]);
  });

  it('creates one tenant per Organization, with the reputation policy, the configuration sets and each sender', async () => {
    const first = await provisionTenant(env, ['example.com', 'billing@example.net']);
    const tenantName = `org-${first.organizationId}`;
    expect(callsFor('CreateTenant').filter((call) => call.body.TenantName === tenantName)).toHaveLength(1);
    const policy = proxy.calls.find((call) => call.method === 'PUT' && call.path.includes(`tenant/${tenantName}/`));
    expect(policy?.path).toMatch(new RegExp(`^/v2/email/reputation/entities/RESOURCE/${arn(`tenant/${tenantName}/tn-\\d+`)}/policy$`));
    expect(policy?.body).toEqual({ ReputationEntityPolicy: 'arn:aws:ses:us-east-1:aws:reputation-policy/standard' });
    const associated = callsFor('CreateTenantResourceAssociation').filter((call) => call.body.TenantName === tenantName).map((call) => call.body.ResourceArn);
    expect(associated).toEqual([...CONFIGURATION_SETS, arn('identity/example.com'), arn('identity/billing@example.net')]);

    await adminJson(env, 'sender', 'remove', '--org', first.organizationId, '--address', 'billing@example.net');
    expect(callsFor('DeleteTenantResourceAssociation').map((call) => call.body)).toEqual([{ TenantName: tenantName, ResourceArn: arn('identity/billing@example.net') }]);
  });

  it('names the sending Organization\'s tenant on every SendEmail, distinct per Organization', async () => {
    const [a, b] = [await provisionTenant(env), await provisionTenant(env)];
    for (const who of [a, b, a]) expect((await send(stack, who.apiKey, messageBody(who.organizationId))).status).toBe(200);
    const sends = callsFor('SendEmail').slice(-3);
    expect(sends.map((call) => call.body.TenantName)).toEqual([`org-${a.organizationId}`, `org-${b.organizationId}`, `org-${a.organizationId}`]);
  });

  it('org tenants sync gives an Organization made without tenants its tenant, and is safe to run again', async () => {
    const { id } = await adminJson({ ...env, SES_TENANTS: 'false' }, 'org', 'create', '--name', 'Before tenants');
    expect(callsFor('CreateTenant').some((call) => call.body.TenantName === `org-${id}`)).toBe(false);
    const synced = await adminJson(env, 'org', 'tenants', 'sync');
    expect(synced).toMatchObject({ created: 1 });
    expect(synced.organizations).toBeGreaterThanOrEqual(4);
    expect(callsFor('CreateTenant').filter((call) => call.body.TenantName === `org-${id}`)).toHaveLength(1);
    expect(await adminJson(env, 'org', 'tenants', 'sync')).toMatchObject({ created: 0 });
  });

  it('org delete names the tenant among what holds the Organization, and --force deletes the tenant', async () => {
    const { organizationId } = await provisionTenant(env, ['example.com']);
    const refused = await admin(env, 'org', 'delete', '--org', organizationId);
    expect(refused.code).toBe(EXIT_CODES.conflict);
    expect(refused.stderr).toBe(`error: Organization ${organizationId} still has 1 member, 1 sender identity (associated with its SES tenant); remove them first, or pass --force to remove them with it\n`);
    expect(callsFor('DeleteTenant')).toEqual([]);
    expect(await adminJson(env, 'org', 'delete', '--org', organizationId, '--force')).toMatchObject({ deleted: true, senders: ['example.com'], tenantDeleted: true });
    expect(callsFor('DeleteTenant').map((call) => call.body)).toEqual([{ TenantName: `org-${organizationId}` }]);
  });

  it('says where to finish when the tenant cannot be made (5), and that sync needs tenants on (1)', async () => {
    const broken = await admin({ ...env, SES_ENDPOINT: 'http://127.0.0.1:9' }, 'org', 'create', '--name', 'Unlucky');
    expect(broken.code).toBe(5);
    expect(broken.stderr).toMatch(/^error: Organization "Unlucky" was created with id [0-9a-f-]{36}, but Amazon SES refused CreateTenant .*; finish it with "org tenants sync"\n$/);
    const { id } = await adminJson(env, 'org', 'create', '--name', 'Lucky');
    const sender = await admin({ ...env, SES_ENDPOINT: 'http://127.0.0.1:9' }, 'sender', 'add', '--org', id, '--domain', 'example.org');
    expect(sender.code).toBe(5);
    expect(sender.stderr).toMatch(new RegExp(`^error: example.org was added to Organization ${id}, but Amazon SES refused GetTenant .*; finish it with "org tenants sync"\n$`));
    const off = await admin({ ...env, SES_TENANTS: 'false' }, 'org', 'tenants', 'sync');
    expect(off.code).toBe(1);
    expect(off.stderr).toMatch(/SES tenants are off/);
  });
});

describe('with SES_TENANTS=true against an SES endpoint that knows no tenants (the emulator itself)', () => {
  it('still makes every tenant call, warns on stderr, and creates the Organization', async () => {
    const bare = await startRecordingSesProxy(emulator.endpoint, { answerTenants: false });
    try {
      const result = await admin({ ...env, SES_ENDPOINT: bare.endpoint }, 'org', 'create', '--name', 'Local only', '--json');
      expect(result.code).toBe(0);
      const { id } = JSON.parse(result.stdout) as { id: string };
      expect(result.stderr).toMatch(/^warning: Amazon SES refused CreateTenant for the tenant of Organization [0-9a-f-]{36} \(.+\); continuing \(local stack\)\n/);
      expect(bare.operations()).toEqual(['CreateTenant', 'GetTenant', 'UpdateReputationEntityPolicy', ...CONFIGURATION_SETS.map(() => 'CreateTenantResourceAssociation')]);
      expect(bare.calls.slice(-4).map((call) => call.body)).toEqual(CONFIGURATION_SETS.map((ResourceArn) => ({ TenantName: `org-${id}`, ResourceArn })));
    } finally {
      await bare.close();
    }
  });
});
