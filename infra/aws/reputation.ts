/**
 * Reputation and SES tenants in AWS (CONTRACT section 11 items 3 and 4), as a list of parts:
 *
 * - an alarm on `OrganizationsPaused`, the metric the events function (rates over threshold) and
 *   the send function (SES refused a paused tenant) emit when they pause an Organization;
 * - with tenants on, a managed policy for the operator who runs the admin CLI: exactly the SES
 *   actions `org create`, `sender add|remove` and `org tenants sync` call, on the Organizations'
 *   tenants (`org-*`), this stack's four configuration sets, the account's identities, and the one
 *   managed reputation policy the stack setting names; and outputs that tell the CLI both.
 */
import { CfnOutput, Duration } from 'aws-cdk-lib';
import type { Stack } from 'aws-cdk-lib';
import { MathExpression, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import { ManagedPolicy, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { PAUSED_METRIC } from '../../functions/shared/reputation/pause-organization';
import { METRICS_NAMESPACE } from '../../functions/shared/runtime/observability';
import type { AlarmRow } from './alarms';
import type { ConfigurationSets } from './configuration-sets';
import { configurationSetArns } from './configuration-sets';
import { tenantArnPattern } from './send-function';
import type { StackSettings } from './settings';

export interface Reputation {
  readonly alarm: AlarmRow;
  readonly tenantAdministration: ManagedPolicy | undefined;
}

/** `services`: the POWERTOOLS_SERVICE_NAME of each function that may pause (the metric's `service` dimension). */
export function addReputation(stack: Stack, configurationSets: ConfigurationSets, settings: StackSettings, services: readonly string[]): Reputation {
  const paused = (service: string) =>
    new Metric({ namespace: METRICS_NAMESPACE, metricName: PAUSED_METRIC, dimensionsMap: { service }, period: Duration.minutes(5), statistic: 'Sum' });
  const usingMetrics = Object.fromEntries(services.map((service, i) => [`p${i}`, paused(service)]));
  const alarm: AlarmRow = {
    id: 'OrganizationPausedAlarm',
    description: 'An Organization was paused (its bounce or complaint rate crossed REPUTATION_*, or SES paused its tenant); "org show" says why, "org resume" lifts it',
    metric: new MathExpression({ label: 'Organizations paused', expression: Object.keys(usingMetrics).join(' + '), usingMetrics, period: Duration.minutes(5) }),
    threshold: 1,
    atOrAbove: true,
    evaluationPeriods: 1,
  };
  if (!settings.sesTenants.enabled) return { alarm, tenantAdministration: undefined };

  const tenants = tenantArnPattern(stack);
  const identities = stack.formatArn({ service: 'ses', resource: 'identity', resourceName: '*' });
  const reputationPolicyArn = stack.formatArn({ service: 'ses', account: 'aws', resource: 'reputation-policy', resourceName: settings.sesTenants.reputationPolicy });
  const tenantAdministration = new ManagedPolicy(stack, 'TenantAdministrationPolicy', {
    description: 'Attach to the operator who runs the admin CLI: the Organizations\' SES tenants and their resources, and the sender identities',
    statements: [
      new PolicyStatement({ sid: 'Tenants', actions: ['ses:CreateTenant', 'ses:GetTenant', 'ses:DeleteTenant'], resources: [tenants] }),
      new PolicyStatement({
        sid: 'TenantResources',
        actions: ['ses:CreateTenantResourceAssociation', 'ses:DeleteTenantResourceAssociation'],
        // A tenant sends through a set only once associated with it: tracked mail's sets too.
        resources: [tenants, ...configurationSetArns(stack, configurationSets), identities],
      }),
      new PolicyStatement({ sid: 'TenantReputationPolicy', actions: ['ses:UpdateReputationEntityPolicy'], resources: [tenants, reputationPolicyArn] }),
      // sender add and sender list: the identity made when SES lacks it, its MAIL FROM, its status.
      new PolicyStatement({ sid: 'SenderIdentities', actions: ['ses:GetEmailIdentity', 'ses:CreateEmailIdentity', 'ses:PutEmailIdentityMailFromAttributes'], resources: [identities] }),
    ],
  });
  new CfnOutput(stack, 'TenantAdministrationPolicyArn', {
    description: 'Managed policy the admin CLI needs for SES tenants and sender identities (org create/delete, sender add/remove/list, org tenants sync)',
    value: tenantAdministration.managedPolicyArn,
  });
  new CfnOutput(stack, 'TenantReputationPolicy', {
    description: 'SES reputation policy of the tenants; pass it to the admin CLI as SES_TENANT_REPUTATION_POLICY',
    value: settings.sesTenants.reputationPolicy,
  });
  return { alarm, tenantAdministration };
}
