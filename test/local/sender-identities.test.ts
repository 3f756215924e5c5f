/**
 * Sender identities as Amazon SES identities (CONTRACT section 16 item 2): `sender add` creates
 * the identity in SES when missing, `sender list` shows SES's status, and a message from an
 * identity SES has not verified fails `SenderNotVerified`. Against moto_server's DynamoDB and
 * SES v2 as the deployed target (`--table`, SES_ENDPOINT): moto has identities
 * (CreateEmailIdentity, GetEmailIdentity, and a SendEmail that refuses an unknown sender) but
 * gives no DKIM tokens and has no MAIL FROM call, so the records printed from SES's tokens and
 * `--mail-from` are checked with a mocked client in test/unit/ses-identities.test.ts. Needs
 * `moto_server` (see test/support/moto.ts).
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteEmailIdentityCommand, GetEmailIdentityCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SendFailure } from '../../functions/shared/mail/ports';
import { SesMailer } from '../../functions/shared/mail/ses-mailer';
import { EXIT_CODES } from '../../infra/admin/command-frame';
import type { RunningService } from '../../infra/local/emulators';
import { ensureTable, startDynamoDb } from '../../infra/local/emulators';
import type { Moto } from '../support/moto';
import { describeWithMoto, startMoto } from '../support/moto';
import { admin, adminJson } from './helpers';

describeWithMoto('sender identities in Amazon SES (moto_server as the deployed account)', () => {
  let moto: Moto;
  let ses: SESv2Client;
  let env: Record<string, string>;
  const table = ['--table', 'sender-identities'];
  const json = (...argv: string[]) => adminJson(env, ...table, ...argv);
  const newOrg = async () => (await json('org', 'create', '--name', 'Acme')).id as string;

  beforeAll(async () => {
    moto = await startMoto();
    const dynamo = new DynamoDBClient(moto.config);
    await ensureTable(dynamo, 'sender-identities');
    dynamo.destroy();
    ses = new SESv2Client(moto.config);
    env = { DYNAMODB_ENDPOINT: moto.config.endpoint, SES_ENDPOINT: moto.config.endpoint, AWS_REGION: moto.config.region };
  }, 30_000);
  afterAll(async () => {
    ses?.destroy();
    await moto?.stop();
  });

  it('sender add creates the domain identity in SES when it is missing, and takes an existing one as it is', async () => {
    const domain = `${randomUUID().slice(0, 8)}.example`;
    await expect(ses.send(new GetEmailIdentityCommand({ EmailIdentity: domain }))).rejects.toMatchObject({ name: 'NotFoundException' });
    const org = await newOrg();
    const added = await json('sender', 'add', '--org', org, '--domain', domain.toUpperCase());
    expect(added).toMatchObject({ organizationId: org, sender: domain, type: 'domain', allowed: true, identity: { created: true, verificationStatus: 'SUCCESS' } });
    expect((await ses.send(new GetEmailIdentityCommand({ EmailIdentity: domain }))).IdentityType).toBe('DOMAIN');

    const again = await admin(env, ...table, 'sender', 'add', '--org', await newOrg(), '--domain', domain);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`  Amazon SES identity ${domain} already there: `);
  });

  it('sender add for an address at a domain SES has creates no identity of its own; one at an unknown domain gets its own', async () => {
    const domain = `${randomUUID().slice(0, 8)}.example`;
    const org = await newOrg();
    await json('sender', 'add', '--org', org, '--domain', domain);
    expect((await json('sender', 'add', '--org', org, '--address', `billing@${domain}`)).identity.created).toBe(false);
    await expect(ses.send(new GetEmailIdentityCommand({ EmailIdentity: `billing@${domain}` }))).rejects.toMatchObject({ name: 'NotFoundException' });

    const lone = `ops@${randomUUID().slice(0, 8)}.example`;
    const human = await admin(env, ...table, 'sender', 'add', '--org', org, '--address', lone);
    expect(human.stdout).toContain(`  Amazon SES identity ${lone} created (SES e-mails that address a link to verify it)`);
    expect((await ses.send(new GetEmailIdentityCommand({ EmailIdentity: lone }))).IdentityType).toBe('EMAIL_ADDRESS');
  });

  it('sender list prints SES\'s verification and DKIM status of each identity, and says when SES has none', async () => {
    const org = await newOrg();
    const kept = `${randomUUID().slice(0, 8)}.example`;
    const dropped = `${randomUUID().slice(0, 8)}.example`;
    await json('sender', 'add', '--org', org, '--domain', kept);
    await json('sender', 'add', '--org', org, '--domain', dropped);
    await ses.send(new DeleteEmailIdentityCommand({ EmailIdentity: dropped }));

    const listed = await json('sender', 'list', '--org', org);
    const answered = await ses.send(new GetEmailIdentityCommand({ EmailIdentity: kept }));
    expect(listed).toEqual({
      organizationId: org,
      senders: expect.arrayContaining([
        { sender: kept, type: 'domain', verified: answered.VerifiedForSendingStatus === true, verificationStatus: answered.VerificationStatus, dkimStatus: answered.DkimAttributes?.Status ?? null },
        { sender: dropped, type: 'domain', verified: false, verificationStatus: 'NOT_FOUND', dkimStatus: null },
      ]),
    });
    const human = await admin(env, ...table, 'sender', 'list', '--org', org);
    expect(human.stdout).toMatch(new RegExp(`^Organization ${org} has 2 sender identities\\n`));
    expect(human.stdout).toContain(`  ${dropped}  NOT an Amazon SES identity (run "sender add" again to create it)\n`);
    expect(human.stdout).toContain(`  ${kept}  ${answered.VerifiedForSendingStatus ? 'verified' : 'NOT verified'} (${answered.VerificationStatus}), DKIM ${answered.DkimAttributes?.Status}`);
  });

  it('a message from an identity SES does not have fails SenderNotVerified, not retryable; one from an identity it has is sent', async () => {
    const domain = `${randomUUID().slice(0, 8)}.example`;
    await json('sender', 'add', '--org', await newOrg(), '--domain', domain);
    const mailer = new SesMailer(ses);
    const message = { organizationId: randomUUID(), to: ['a@example.org'], cc: [], bcc: [], subject: 'Hi', text: 'Body' };
    await expect(mailer.send({ ...message, from: `noreply@${domain}` })).resolves.toEqual({ messageId: expect.any(String) });
    const failure = await mailer.send({ ...message, from: `noreply@unverified-${domain}` }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SendFailure);
    expect(failure).toMatchObject({ code: 'SenderNotVerified', retryable: false });
  });

  it('an SES refusal stops sender add before anything is stored (exit 5)', async () => {
    const org = await newOrg();
    const refused = await admin({ ...env, SES_ENDPOINT: 'http://127.0.0.1:9' }, ...table, 'sender', 'add', '--org', org, '--domain', 'refused.example', '--json');
    expect(refused.code).toBe(EXIT_CODES.unavailable);
    expect(JSON.parse(refused.stderr).error.code).toBe('ses_identity_unavailable');
    expect((await json('org', 'show', '--org', org)).senders).toEqual([]);
  });
});

describe('sender identities on the local stack', () => {
  let dynamo: RunningService;
  let env: Record<string, string>;
  beforeAll(async () => {
    dynamo = await startDynamoDb();
    const client = new DynamoDBClient({ region: 'us-east-1', endpoint: dynamo.endpoint });
    await ensureTable(client, 'sender-identities-local');
    client.destroy();
    env = { DYNAMODB_ENDPOINT: dynamo.endpoint, TABLE_NAME: 'sender-identities-local', SES_ENDPOINT: 'http://127.0.0.1:9' };
  });
  afterAll(async () => dynamo?.close());

  it('counts every identity as verified at once, calls no SES, and prints the records AWS would need', async () => {
    const { id: org } = await adminJson(env, 'org', 'create', '--name', 'Local');
    // SES_ENDPOINT points nowhere: a call to it would fail the command.
    const added = await admin(env, 'sender', 'add', '--org', org, '--domain', 'shop.example', '--mail-from', 'bounce.shop.example');
    expect(added).toMatchObject({ code: 0, stderr: '' });
    expect(added.stdout).toBe(
      [
        `Organization ${org} may now send from the domain shop.example`,
        '  Amazon SES: counted as verified (local stack); in AWS it would need these DNS records:',
        ...[1, 2, 3].map((n) => `  <token${n}>._domainkey.shop.example  CNAME  <token${n}>.dkim.amazonses.com`),
        '  bounce.shop.example  MX  10 feedback-smtp.us-east-1.amazonses.com',
        '  bounce.shop.example  TXT  "v=spf1 include:amazonses.com ~all"',
        '',
      ].join('\n'),
    );
    expect(await adminJson(env, 'sender', 'list', '--org', org)).toEqual({
      organizationId: org,
      senders: [{ sender: 'shop.example', type: 'domain', verified: true, verificationStatus: 'SUCCESS', dkimStatus: 'SUCCESS' }],
    });
    expect((await admin(env, 'sender', 'list', '--org', org)).stdout).toBe(`Organization ${org} has 1 sender identity\n  shop.example  verified (local stack)\n`);
    const wrong = await admin(env, 'sender', 'add', '--org', org, '--domain', 'shop.example', '--mail-from', 'bounce.other.example');
    expect(wrong).toMatchObject({ code: EXIT_CODES.invalid, stdout: '' });
    expect(wrong.stderr).toMatch(/--mail-from must be a subdomain of shop\.example/);
  });
});
