/**
 * The admin CLI's SES tenants in AWS mode (infra/admin/ses-tenants.ts), where no local endpoint
 * can stand in for SES, so its client is mocked: which calls, with which ARNs, what "already
 * done" means, and that a refusal stops the command; and when tenants are on at all.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import {
  AlreadyExistsException,
  CreateTenantCommand,
  CreateTenantResourceAssociationCommand,
  DeleteTenantCommand,
  DeleteTenantResourceAssociationCommand,
  GetTenantCommand,
  NotFoundException,
  SESv2Client,
  UpdateReputationEntityPolicyCommand,
} from '@aws-sdk/client-sesv2';
import { mockClient } from 'aws-sdk-client-mock';
import type { AwsClientStub } from 'aws-sdk-client-mock';
import { SesTenants, TenantError, tenantsFor } from '../../infra/admin/ses-tenants';

const ORG = '5f0c7c2e-8d1c-4a55-9a8e-0c3f5e2b9a10';
const TENANT_ARN = `arn:aws:ses:eu-west-1:111122223333:tenant/org-${ORG}/tn-abc`;
const deployed = { tableName: 't', region: 'eu-west-1', endpoint: undefined, local: false };

let ses: AwsClientStub<SESv2Client>;
beforeEach(() => {
  ses = mockClient(SESv2Client);
  ses.on(GetTenantCommand).resolves({ Tenant: { TenantName: `org-${ORG}`, TenantArn: TENANT_ARN } });
});
afterEach(() => ses.restore());

const tenants = () => new SesTenants(new SESv2Client({ region: 'eu-west-1' }), { configurationSet: 'EmailSendApi-cs', reputationPolicy: 'strict' });

describe('SesTenants (AWS)', () => {
  it('creates the tenant, applies the reputation policy, associates the configuration set, its three tracked siblings and each sender, by the ARNs of the account of the tenant', async () => {
    expect(await tenants().ensure(ORG, ['example.com'])).toBe(true);
    expect(ses.commandCalls(CreateTenantCommand).map((c) => c.args[0].input)).toEqual([{ TenantName: `org-${ORG}` }]);
    expect(ses.commandCalls(UpdateReputationEntityPolicyCommand).map((c) => c.args[0].input)).toEqual([
      { ReputationEntityType: 'RESOURCE', ReputationEntityReference: TENANT_ARN, ReputationEntityPolicy: 'arn:aws:ses:eu-west-1:aws:reputation-policy/strict' },
    ]);
    expect(ses.commandCalls(CreateTenantResourceAssociationCommand).map((c) => c.args[0].input.ResourceArn)).toEqual([
      'arn:aws:ses:eu-west-1:111122223333:configuration-set/EmailSendApi-cs',
      'arn:aws:ses:eu-west-1:111122223333:configuration-set/EmailSendApi-cs-track-opens',
      'arn:aws:ses:eu-west-1:111122223333:configuration-set/EmailSendApi-cs-track-clicks',
      'arn:aws:ses:eu-west-1:111122223333:configuration-set/EmailSendApi-cs-track-opens-clicks',
      'arn:aws:ses:eu-west-1:111122223333:identity/example.com',
    ]);
  });

  it('takes "already exists" as done, so it can run again', async () => {
    ses.on(CreateTenantCommand).rejects(new AlreadyExistsException({ message: 'exists', $metadata: {} }));
    ses.on(CreateTenantResourceAssociationCommand).rejects(new AlreadyExistsException({ message: 'exists', $metadata: {} }));
    expect(await tenants().ensure(ORG, ['example.com'])).toBe(false);
  });

  it('stops on any other refusal, naming the step', async () => {
    ses.on(UpdateReputationEntityPolicyCommand).rejects(Object.assign(new Error('not authorized'), { name: 'AccessDeniedException' }));
    const refused = tenants().ensure(ORG, []);
    await expect(refused).rejects.toBeInstanceOf(TenantError);
    await expect(refused).rejects.toThrow(`Amazon SES refused UpdateReputationEntityPolicy for the tenant of Organization ${ORG} (AccessDeniedException: not authorized)`);
  });

  it('dissociates an identity, and takes a missing association as done', async () => {
    await tenants().dissociateIdentity(ORG, 'billing@example.com');
    expect(ses.commandCalls(DeleteTenantResourceAssociationCommand)[0]?.args[0].input).toEqual({ TenantName: `org-${ORG}`, ResourceArn: 'arn:aws:ses:eu-west-1:111122223333:identity/billing@example.com' });
    ses.on(DeleteTenantResourceAssociationCommand).rejects(new NotFoundException({ message: 'none', $metadata: {} }));
    await expect(tenants().dissociateIdentity(ORG, 'billing@example.com')).resolves.toBeUndefined();
  });
});

describe('SesTenants.remove (org delete)', () => {
  it('deletes the tenant by name, takes a tenant that is not there as gone, and stops on any other refusal', async () => {
    await tenants().remove(ORG);
    expect(ses.commandCalls(DeleteTenantCommand).map((c) => c.args[0].input)).toEqual([{ TenantName: `org-${ORG}` }]);
    ses.on(DeleteTenantCommand).rejects(new NotFoundException({ message: 'no tenant', $metadata: {} }));
    await expect(tenants().remove(ORG)).resolves.toBeUndefined();
    ses.on(DeleteTenantCommand).rejects(Object.assign(new Error('not allowed'), { name: 'AccessDeniedException' }));
    await expect(tenants().remove(ORG)).rejects.toThrow(/refused DeleteTenant for the tenant of Organization .*AccessDeniedException/);
  });
});

describe('tenantsFor', () => {
  it('is on for a deployed table and needs its configuration set there; off locally unless SES_TENANTS=true', () => {
    expect(() => tenantsFor(deployed, {})).toThrow(/SES_CONFIGURATION_SET/);
    const inAws = tenantsFor(deployed, { SES_CONFIGURATION_SET: 'cs' });
    expect(inAws).toBeInstanceOf(SesTenants);
    inAws?.destroy();
    expect(tenantsFor(deployed, { SES_TENANTS: 'false' })).toBeUndefined();
    const local = { tableName: 't', region: 'us-east-1', endpoint: 'http://127.0.0.1:8000', local: true };
    expect(tenantsFor(local, {})).toBeUndefined();
    tenantsFor(local, { SES_TENANTS: 'true' })?.destroy();
    expect(() => tenantsFor(local, { SES_TENANTS: 'true', SES_TENANT_REPUTATION_POLICY: 'lenient' })).toThrow(/SES_TENANT_REPUTATION_POLICY must be one of standard, strict, none/);
  });
});
