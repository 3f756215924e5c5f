/**
 * The README's "Deploy to AWS" section runs as written (CONTRACT section 16 item 1): its shell
 * blocks are taken from README.md, joined in order and run by bash (the first block's `set -e`
 * stops at any failure), against an AWS account played on 127.0.0.1, and the run ends with a
 * message sent through the send function.
 *
 * What plays the account, and where it differs from one:
 * - moto_server: the table (DynamoDB), the settings page's user pool (Cognito) and SES v2
 *   (`CreateEmailIdentity`, `GetEmailIdentity`, `SendEmail`).
 * - moto has no SES tenant calls: a front on 127.0.0.1 (test/support/recording-ses-proxy.ts)
 *   answers those and hands every other SES call to moto. The local stack's own SES front does not
 *   speak tenants, so it cannot be the one.
 * - `npx cdk bootstrap` and `npx cdk deploy` are the one thing not run: moto 5.2's CloudFormation
 *   lacks resource types the stack uses (`AWS::Scheduler::ScheduleGroup` fails the deploy), so a
 *   shell function named `npx` stands in for those two commands only: it writes the outputs file
 *   `cdk deploy --outputs-file` would, with the values of the account above, and the test checks
 *   that every output the README reads is an output of the synthesized stack.
 * - The send function behind `SendUrl` is the local stack's: the same handler Lambda runs, with
 *   the deployed table, SES (through the tenant front) and SES_TENANTS on, as the stack sets them.
 *
 * Needs `moto_server` (see test/support/moto.ts) and bash.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CognitoIdentityProviderClient, CreateUserPoolCommand, ListUsersCommand } from '@aws-sdk/client-cognito-identity-provider';
import { CreateConfigurationSetCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { Template } from 'aws-cdk-lib/assertions';
import { buildStack } from '../infra/support';
import type { Moto } from '../support/moto';
import { describeWithMoto, startMoto } from '../support/moto';
import type { RecordingSesProxy } from '../support/recording-ses-proxy';
import { startRecordingSesProxy } from '../support/recording-ses-proxy';
import type { TestStack } from './helpers';
import { startTestStack } from './helpers';

const ROOT = new URL('../../', import.meta.url).pathname;
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const TABLE = 'EmailSendApi-Table';
const CONFIGURATION_SET = 'EmailSendApi-configuration-set';

/** The shell blocks of the README's deploy section, in order, without the list's indentation. */
function deployBlocks(): string[] {
  const start = README.indexOf('## Deploy to AWS');
  const section = README.slice(start, README.indexOf('\n## ', start + 1));
  return [...section.matchAll(/^( *)```sh\n([\s\S]*?)^\1```$/gm)].map(([, indent, body]) => body!.replace(new RegExp(`^${indent}`, 'gm'), ''));
}

/** Stands in for `npx cdk bootstrap` and `npx cdk deploy --outputs-file F` (see the opening comment); any other npx runs. */
const CDK_STAND_IN = `npx() {
  case "$1 $2" in
    "cdk bootstrap") echo "(test) cdk bootstrap: stand-in" ;;
    "cdk deploy") while [ $# -gt 0 ]; do [ "$1" = --outputs-file ] && cp "$CDK_OUTPUTS" "$2"; shift; done ;;
    *) command npx "$@" ;;
  esac
}
`;

function bash(script: string, cwd: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describeWithMoto('the README deploy section, run as written against the emulated account', () => {
  let moto: Moto;
  let front: RecordingSesProxy;
  let stack: TestStack;
  let cwd: string;
  let userPoolId: string;

  beforeAll(async () => {
    moto = await startMoto();
    const cognito = new CognitoIdentityProviderClient(moto.config);
    userPoolId = (await cognito.send(new CreateUserPoolCommand({ PoolName: 'EmailSendApi-users' }))).UserPool!.Id!;
    cognito.destroy();
    const ses = new SESv2Client(moto.config);
    await ses.send(new CreateConfigurationSetCommand({ ConfigurationSetName: CONFIGURATION_SET }));
    ses.destroy();
    front = await startRecordingSesProxy(moto.config.endpoint);
    stack = await startTestStack({
      dynamodbEndpoint: moto.config.endpoint,
      tableName: TABLE,
      sesEndpoint: front.endpoint,
      sesMaxSendRate: 10,
      region: moto.config.region,
      serviceEnv: { SES_TENANTS: 'true', SES_CONFIGURATION_SET: CONFIGURATION_SET },
    });
    // A folder of its own for the README's `.local/cdk-outputs.json`, with what `npm run admin` needs.
    cwd = mkdtempSync(join(tmpdir(), 'readme-deploy-'));
    for (const name of ['package.json', 'node_modules', 'infra', 'functions', 'tsconfig.json']) symlinkSync(join(ROOT, name), join(cwd, name));
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    await front?.close();
    await moto?.stop();
    if (cwd) rmSync(cwd, { recursive: true, force: true });
  });

  it('reads only outputs the stack has', () => {
    const outputs = Object.keys(Template.fromStack(buildStack().stack).toJSON().Outputs as object);
    const read = [...deployBlocks().join('\n').matchAll(/\bo\.(\w+)/g)].map(([, name]) => name!);
    expect(read).toEqual(expect.arrayContaining(['SendUrl', 'TableName', 'Region', 'ConfigurationSetName', 'TenantReputationPolicy', 'WebhookQueueUrl', 'ScheduleGroupName']));
    expect(outputs).toEqual(expect.arrayContaining(read));
  });

  it('provisions, adds the sender domain and sends, every command in order under set -e', async () => {
    const blocks = deployBlocks();
    expect(blocks).toHaveLength(5);
    expect(blocks[0]!.split('\n')[0]).toBe('set -e');
    const outputsFile = join(cwd, 'stand-in-outputs.json');
    const outputs = {
      EmailSendApi: {
        SendUrl: stack.sendUrl,
        TableName: TABLE,
        Region: moto.config.region,
        UserPoolId: userPoolId,
        ConfigurationSetName: CONFIGURATION_SET,
        TenantReputationPolicy: 'standard',
        WebhookQueueUrl: `${moto.config.endpoint}/123456789012/EmailSendApi-WebhookQueue`,
        ScheduleGroupName: 'EmailSendApi-ScheduleGroup',
      },
    };
    writeFileSync(outputsFile, JSON.stringify(outputs));

    const result = await bash(`${CDK_STAND_IN}${blocks.join('\n')}\nprintf '\\nORG=%s\\n' "$ORG"`, cwd, {
      PATH: process.env.PATH!,
      HOME: process.env.HOME ?? cwd,
      CDK_OUTPUTS: outputsFile,
      // What the operator's shell has (the README's preamble), here pointed at the emulated account.
      AWS_REGION: moto.config.region,
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
      DYNAMODB_ENDPOINT: moto.config.endpoint,
      SES_ENDPOINT: front.endpoint,
      AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER: moto.config.endpoint,
      // The deployed stack has SES tenants on; a table on 127.0.0.1 would otherwise count as local.
      SES_TENANTS: 'true',
    });
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    const organizationId = /^ORG=([0-9a-f-]{36})$/m.exec(result.stdout)?.[1];
    expect(organizationId).toBeDefined();
    // The last command's answer: the message sent, through the send function, from the identity sender add made.
    expect(result.stdout).toContain(`{"OrganizationId":"${organizationId}","Messages":[{"Index":0,"Status":"Sent","MessageId":`);
    expect(front.operations()).toEqual(expect.arrayContaining(['CreateTenant', 'CreateTenantResourceAssociation']));
    // The tenant may send through the configuration set and its three tracked siblings (tracked mail's), from the README's exports alone.
    const associated = front.calls.filter((_, i) => front.operations()[i] === 'CreateTenantResourceAssociation').map((call) => String(call.body.ResourceArn));
    expect(associated.flatMap((arn) => /:configuration-set\/(.+)$/.exec(arn)?.[1] ?? [])).toEqual(
      ['', '-track-opens', '-track-clicks', '-track-opens-clicks'].map((suffix) => `${CONFIGURATION_SET}${suffix}`),
    );
    expect(front.calls.filter((call) => call.path === '/v2/email/outbound-emails').map((call) => call.body)).toEqual([
      expect.objectContaining({ FromEmailAddress: '"Acme" <noreply@example.com>', TenantName: `org-${organizationId}`, ConfigurationSetName: CONFIGURATION_SET }),
    ]);
    // user create --user-pool-id invited the operator into the settings page's pool.
    const cognito = new CognitoIdentityProviderClient(moto.config);
    const { Users } = await cognito.send(new ListUsersCommand({ UserPoolId: userPoolId }));
    cognito.destroy();
    expect(Users?.map((user) => user.Username)).toEqual(['ops@acme.example']);
  }, 180_000);
});
