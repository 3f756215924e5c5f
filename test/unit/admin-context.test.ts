/**
 * The admin context (infra/admin/admin-context.ts): the target is decided once from the options
 * and the environment, and each client is built the first time a command asks for it and then
 * shared, so the tenant calls and the identity calls go through one SES client, and a command
 * that needs no SES is not stopped by a tenant setting it never uses.
 */
import { describe, expect, it } from '@jest/globals';
import { AesGcmSealer, KmsSealer } from '../../functions/shared/webhooks/sealing';
import { resolveAdminContext } from '../../infra/admin/admin-context';
import { SesTenants } from '../../infra/admin/ses-tenants';

const quiet = () => undefined;
const deployed = { table: 'prod-table', region: 'eu-west-1' };

describe('resolveAdminContext', () => {
  it('targets the local stack by default and a deployed table with --table', () => {
    const local = resolveAdminContext({}, { DYNAMODB_PORT: '8123', TABLE_NAME: 'mine' }, quiet);
    expect(local.target).toEqual({ tableName: 'mine', region: 'us-east-1', endpoint: 'http://127.0.0.1:8123', local: true });
    const aws = resolveAdminContext(deployed, {}, quiet);
    expect(aws.target).toEqual({ tableName: 'prod-table', region: 'eu-west-1', endpoint: undefined, local: false });
    expect(aws).toMatchObject(aws.target);
  });

  it('builds each client once and shares the SES client with the tenants', async () => {
    const admin = resolveAdminContext(deployed, { SES_CONFIGURATION_SET: 'cs' }, quiet);
    expect(admin.store()).toBe(admin.store());
    expect(admin.ses()).toBe(admin.ses());
    const tenants = admin.tenants();
    expect(tenants).toBeInstanceOf(SesTenants);
    expect(admin.tenants()).toBe(tenants);
    expect((tenants as unknown as { client: unknown }).client).toBe(admin.ses());
    expect(await admin.ses().config.region()).toBe('eu-west-1');
    admin.close();
  });

  it('reads a setting only when a command needs what it configures', () => {
    // A deployed table's tenants need SES_CONFIGURATION_SET; the table alone does not.
    const admin = resolveAdminContext(deployed, {}, quiet);
    expect(() => admin.store()).not.toThrow();
    expect(() => admin.tenants()).toThrow(/SES_CONFIGURATION_SET/);
    expect(() => admin.sealer(undefined)).toThrow(/--kms-key/);
    expect(admin.sealer('arn:aws:kms:eu-west-1:111122223333:key/k')).toBeInstanceOf(KmsSealer);
    expect(admin.userPool(undefined)).toBeUndefined();
    admin.close();
    expect(resolveAdminContext({}, {}, quiet).sealer(undefined)).toBeInstanceOf(AesGcmSealer);
  });

  it('takes the user pool from --user-pool-id or USER_POOL_ID, once per pool, in the pool\'s region', async () => {
    const admin = resolveAdminContext(deployed, { USER_POOL_ID: 'eu-central-1_Abc123' }, quiet);
    const pool = admin.userPool(undefined);
    expect(pool?.id).toBe('eu-central-1_Abc123');
    expect(admin.userPool('eu-central-1_Abc123')).toBe(pool);
    expect(admin.userPool('us-west-2_Other9')?.id).toBe('us-west-2_Other9');
    expect(() => admin.userPool('not-a-pool')).toThrow(/not a Cognito user pool id/);
    admin.close();
  });
});
