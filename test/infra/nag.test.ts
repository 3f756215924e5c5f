import { beforeAll, describe, expect, it } from '@jest/globals';
import type { App } from 'aws-cdk-lib';
import type { PolicyViolation } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { EmailSendApiStack } from '../../infra/aws/stack';
import { acknowledgements, buildStack, sameGroup } from './support';

/** One line per violating resource, so a failure names the rule and the construct. */
function describeViolations(violations: PolicyViolation[]): string[] {
  return violations.flatMap((v) => v.violatingResources.map((r) => `${v.severity} ${v.ruleName} at ${r.constructPath}: ${v.description}`));
}

/** The findings that exist before acknowledgements, as `rule @ construct path`. */
function rawFindings(stack: EmailSendApiStack): string[] {
  const pack = new AwsSolutionsChecks();
  // isAcknowledged is cdk-nag's private hook; overriding it shows what the acknowledgements hide.
  // If cdk-nag renames it, this test fails loudly (the lists below would differ), not silently.
  (pack as unknown as { isAcknowledged: () => boolean }).isAcknowledged = () => false;
  return pack
    .validateScope(stack)
    .violations.flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} @ ${r.constructPath}`));
}

const COMMON_ACKNOWLEDGEMENTS = [
  'AwsSolutions-APIG4 @ EmailSendApi/HttpApi/DELETE--v1.2--templates--{Name}',
  'AwsSolutions-APIG4 @ EmailSendApi/HttpApi/DefaultRoute',
  'AwsSolutions-APIG4 @ EmailSendApi/HttpApi/GET--problems',
  'AwsSolutions-APIG4 @ EmailSendApi/HttpApi/GET--problems--{proxy+}',
  'AwsSolutions-APIG4 @ EmailSendApi/HttpApi/GET--settings',
  'AwsSolutions-APIG4 @ EmailSendApi/HttpApi/GET--settings--{proxy+}',
  'AwsSolutions-APIG4 @ EmailSendApi/HttpApi/GET--v1.2--templates',
  'AwsSolutions-APIG4 @ EmailSendApi/HttpApi/GET--v1.2--templates--{Name}',
  'AwsSolutions-APIG4 @ EmailSendApi/HttpApi/HEAD--problems',
  'AwsSolutions-APIG4 @ EmailSendApi/HttpApi/HEAD--problems--{proxy+}',
  'AwsSolutions-APIG4 @ EmailSendApi/HttpApi/HEAD--settings',
  'AwsSolutions-APIG4 @ EmailSendApi/HttpApi/HEAD--settings--{proxy+}',
  'AwsSolutions-APIG4 @ EmailSendApi/HttpApi/POST--v1.2--email--cancel',
  'AwsSolutions-APIG4 @ EmailSendApi/HttpApi/POST--v1.2--email--send',
  'AwsSolutions-APIG4 @ EmailSendApi/HttpApi/POST--v1.2--email--status',
  'AwsSolutions-APIG4 @ EmailSendApi/HttpApi/POST--v1.2--templates--{Name}--render',
  'AwsSolutions-APIG4 @ EmailSendApi/HttpApi/PUT--v1.2--templates--{Name}',
  'AwsSolutions-IAM5[Resource::*] @ EmailSendApi/CancelFunctionRole',
  'AwsSolutions-IAM5[Resource::*] @ EmailSendApi/EventsFunctionRole',
  'AwsSolutions-IAM5[Resource::*] @ EmailSendApi/ScheduledSendFunctionRole',
  'AwsSolutions-IAM5[Resource::*] @ EmailSendApi/SendFunctionRole',
  'AwsSolutions-IAM5[Resource::*] @ EmailSendApi/SettingsApiFunctionRole',
  'AwsSolutions-IAM5[Resource::*] @ EmailSendApi/SettingsPageFunctionRole',
  'AwsSolutions-IAM5[Resource::*] @ EmailSendApi/StatusFunctionRole',
  'AwsSolutions-IAM5[Resource::*] @ EmailSendApi/TemplatesFunctionRole',
  'AwsSolutions-IAM5[Resource::*] @ EmailSendApi/WebhookFunctionRole',
  // One-time schedules of the stack's own group, named by ScheduleId (CONTRACT section 13).
  ...['CancelFunctionRole', 'OperatorPolicy', 'ScheduledSendFunctionRole', 'SendFunctionRole', 'SettingsApiFunctionRole'].map(
    (role) => `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/<ScheduleGroup>/*] @ EmailSendApi/${role}`,
  ),
  'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:identity/*] @ EmailSendApi/ScheduledSendFunctionRole',
  'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:identity/*] @ EmailSendApi/SendFunctionRole',
  // SES tenants (on by default): the Organizations' tenants, named org-<id> by the admin CLI.
  'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:identity/*] @ EmailSendApi/TenantAdministrationPolicy',
  'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:tenant/org-*] @ EmailSendApi/ScheduledSendFunctionRole',
  'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:tenant/org-*] @ EmailSendApi/SendFunctionRole',
  'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:tenant/org-*] @ EmailSendApi/TenantAdministrationPolicy',
];
/** The stack's own user pool: MFA optional, and the Essentials plan (no threat protection). */
const USER_POOL_ACKNOWLEDGEMENTS = ['AwsSolutions-COG2 @ EmailSendApi/UserPool', 'AwsSolutions-COG8 @ EmailSendApi/UserPool'];
const withUserPool = [...COMMON_ACKNOWLEDGEMENTS, ...USER_POOL_ACKNOWLEDGEMENTS].sort();

describe.each([
  ['default context', {}, withUserPool],
  [
    'custom domain and alarm topic',
    {
      customDomainName: 'mail.example.com',
      customDomainCertificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-1111-2222-3333-444455556666',
      alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:alarms',
    },
    withUserPool,
  ],
  ['an existing OpenID issuer instead of a user pool', { oidcIssuer: 'https://login.example.com/tenant-1', oidcClientId: 'settings-page' }, [...COMMON_ACKNOWLEDGEMENTS].sort()],
  // Only the roles that send keep a "*" (ses:GetAccount); the others had X-Ray's alone.
  ['tracing off', { tracing: false }, withUserPool.filter((ack) => !/IAM5\[Resource::\*\] @ .*\/(?!SendFunctionRole|ScheduledSendFunctionRole)\w+Role$/.test(ack))],
  ['SES tenants off', { sesTenants: false }, withUserPool.filter((ack) => !/tenant\/org-\*|TenantAdministrationPolicy/.test(ack))],
])('cdk-nag AwsSolutions (%s)', (_name, context, EXPECTED_ACKNOWLEDGEMENTS) => {
  let app: App;
  let stack: EmailSendApiStack;

  beforeAll(() => {
    ({ app, stack } = buildStack(context));
    // Synthesise first, so the checks see the finished tree (aspects applied), as `cdk synth` does.
    app.synth();
  });

  it('reports no unacknowledged error or warning', () => {
    const report = new AwsSolutionsChecks(undefined, { verbose: true }).validateScope(stack);
    expect(describeViolations(report.violations)).toEqual([]);
    expect(report.success).toBe(true);
  });

  it('acknowledges exactly the expected findings, each on the construct it concerns', () => {
    const acknowledged = acknowledgements(stack)
      .map((a) => sameGroup(`${a.id} @ ${a.path}`))
      .sort();
    expect(acknowledged).toEqual(EXPECTED_ACKNOWLEDGEMENTS);
  });

  it('has no acknowledgement without a finding behind it, and no finding without one', () => {
    const findings = rawFindings(stack)
      .map((f) => sameGroup(f.replace(/\/(Resource|DefaultPolicy\/Resource)$/, '')))
      .sort();
    expect(findings).toEqual(EXPECTED_ACKNOWLEDGEMENTS);
  });

  it('gives every acknowledgement a specific reason', () => {
    for (const { id, reason } of acknowledgements(stack)) {
      // A reviewer needs the why and the compensating control, not a label.
      expect({ id, long: reason.length >= 120 }).toEqual({ id, long: true });
      expect(reason).not.toMatch(/\b(TODO|TBD|FIXME|not needed|ignore)\b/i);
    }
  });

  it('leaves no CDK warning or error annotations', () => {
    const annotations = Annotations.fromStack(stack);
    expect(annotations.findError('*', Match.anyValue())).toEqual([]);
    expect(annotations.findWarning('*', Match.anyValue())).toEqual([]);
  });
});
