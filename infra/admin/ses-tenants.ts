/**
 * Each Organization as an Amazon SES tenant (CONTRACT section 11 item 4), as the admin command
 * line sets it up: `org create` and `org tenants sync` create the tenant (`CreateTenant`), give it
 * the stack's reputation policy (`UpdateReputationEntityPolicy`) and associate the configuration
 * sets (the base one and its three tracked siblings, functions/shared/mail/tracking.ts) and the
 * Organization's sender identities (`CreateTenantResourceAssociation`); `sender add`
 * and `sender remove` associate and dissociate one identity. Every step accepts "already done",
 * so any of them can be run again after an interruption.
 *
 * On in AWS (a deployed table), off locally unless SES_TENANTS=true; the calls go to SES_ENDPOINT
 * when it is set (locally: the local stack's SES port), so a proxy or LocalStack sees them.
 * Locally every call is made, but an endpoint that answers without implementing one (the SES
 * emulator knows no tenants) costs a warning, not the command: the tenant's ARN is then assumed
 * in the local stack's account. In AWS every refusal stops the command with its reason.
 */
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
import { tenantNameOf } from '../../functions/shared/mail/tenants';
import { trackedConfigurationSets } from '../../functions/shared/mail/tracking';
import { DEFAULTS } from '../../functions/shared/runtime/config';
import { networkErrorCode } from '../../functions/shared/runtime/network-errors';
import { SettingsReader, fromEnv } from '../../functions/shared/runtime/settings-reader';
import { InvalidArgumentError } from '../../functions/shared/store/records';
import { placeholderCredentials } from '../local/settings';
import type { Target } from './target';
import { isEmulated, sesEndpointOf } from './target';

/** SES's managed reputation policies: what SES does with a tenant's own reputation findings. */
export const REPUTATION_POLICIES = ['standard', 'strict', 'none'] as const;
export type ReputationPolicy = (typeof REPUTATION_POLICIES)[number];

type Env = Readonly<Record<string, string | undefined>>;

/** The account the local stack's SES plays (as its mailbox simulator's events say). */
const LOCAL_ACCOUNT = '123456789012';

export interface TenantSettings {
  /** Associated with every tenant with its tracked siblings, so the tenant may send through them (the stack's ConfigurationSetName). */
  readonly configurationSet: string | undefined;
  readonly reputationPolicy: ReputationPolicy;
  /** Local best effort: the region and account a tenant's ARN is assumed in, and where warnings go. Absent in AWS. */
  readonly local?: { readonly region: string; readonly account: string; readonly warn: (line: string) => void } | undefined;
}

/** A tenant call failed; the message names the step and the Organization. */
export class TenantError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TenantError';
  }
}

/** `arn:<partition>:ses:<region>:<account>:` of the tenant's own ARN, for the ARNs of the resources to associate. */
function arnPrefix(tenantArn: string): string {
  const [arn, partition, service, region, account] = tenantArn.split(':');
  if (arn !== 'arn' || service !== 'ses' || !partition || !region || !account) throw new TenantError(`SES answered an unexpected tenant ARN "${tenantArn}"`);
  return `arn:${partition}:ses:${region}:${account}:`;
}

async function unlessAlready(call: () => Promise<unknown>): Promise<boolean> {
  try {
    await call();
    return true;
  } catch (error) {
    if (error instanceof AlreadyExistsException) return false;
    throw error;
  }
}

export class SesTenants {
  constructor(
    private readonly client: SESv2Client,
    private readonly settings: TenantSettings,
  ) {}

  /** Creates (or completes) the Organization's tenant; true when this call created it. */
  async ensure(organizationId: string, senders: readonly string[]): Promise<boolean> {
    const TenantName = tenantNameOf(organizationId);
    const created = (await this.step('CreateTenant', organizationId, () => unlessAlready(() => this.client.send(new CreateTenantCommand({ TenantName }))))) === true;
    const { arn, prefix } = await this.tenant(organizationId);
    const [, partition, , region] = prefix.split(':');
    const { configurationSet } = this.settings;
    await this.step('UpdateReputationEntityPolicy', organizationId, () =>
      this.client.send(
        new UpdateReputationEntityPolicyCommand({
          ReputationEntityType: 'RESOURCE',
          ReputationEntityReference: arn,
          // SES's own policies live in the pseudo-account "aws".
          ReputationEntityPolicy: `arn:${partition}:ses:${region}:aws:reputation-policy/${this.settings.reputationPolicy}`,
        }),
      ),
    );
    // Tracked mail goes through the tracked sets, and SES refuses a tenant's send through a set not associated with it.
    const sets = configurationSet ? [configurationSet, ...Object.values(trackedConfigurationSets(configurationSet))] : [];
    for (const set of sets) await this.associate(organizationId, `${prefix}configuration-set/${set}`);
    for (const sender of senders) await this.associate(organizationId, `${prefix}identity/${sender}`);
    return created;
  }

  async associateIdentity(organizationId: string, sender: string): Promise<void> {
    await this.associate(organizationId, `${(await this.tenant(organizationId)).prefix}identity/${sender}`);
  }

  /** An association that is not there (or a tenant that never was) is already what was asked for. */
  async dissociateIdentity(organizationId: string, sender: string): Promise<void> {
    const TenantName = tenantNameOf(organizationId);
    try {
      const ResourceArn = `${(await this.tenant(organizationId)).prefix}identity/${sender}`;
      await this.step('DeleteTenantResourceAssociation', organizationId, () => this.client.send(new DeleteTenantResourceAssociationCommand({ TenantName, ResourceArn })));
    } catch (error) {
      if (error instanceof TenantError && error.cause instanceof NotFoundException) return;
      throw error;
    }
  }

  /** Deletes the Organization's tenant (SES removes its associations with it); a tenant that is not there is already gone. */
  async remove(organizationId: string): Promise<void> {
    const TenantName = tenantNameOf(organizationId);
    try {
      await this.step('DeleteTenant', organizationId, () => this.client.send(new DeleteTenantCommand({ TenantName })));
    } catch (error) {
      if (error instanceof TenantError && error.cause instanceof NotFoundException) return;
      throw error;
    }
  }

  destroy(): void {
    this.client.destroy();
  }

  /** The tenant's ARN (CreateTenant answers it only to the call that creates it) and the ARN prefix of its account. */
  private async tenant(organizationId: string): Promise<{ readonly arn: string; readonly prefix: string }> {
    const TenantName = tenantNameOf(organizationId);
    const answer = await this.step('GetTenant', organizationId, () => this.client.send(new GetTenantCommand({ TenantName })));
    const { local } = this.settings;
    const arn = answer?.Tenant?.TenantArn ?? (local && `arn:aws:ses:${local.region}:${local.account}:tenant/${TenantName}/local`);
    if (!arn) throw new TenantError(`SES answered GetTenant for ${TenantName} without its ARN`);
    return { arn, prefix: arnPrefix(arn) };
  }

  private async associate(organizationId: string, ResourceArn: string): Promise<void> {
    const TenantName = tenantNameOf(organizationId);
    await this.step(`CreateTenantResourceAssociation (${ResourceArn})`, organizationId, () =>
      unlessAlready(() => this.client.send(new CreateTenantResourceAssociationCommand({ TenantName, ResourceArn }))),
    );
  }

  private async step<T>(what: string, organizationId: string, call: () => Promise<T>): Promise<T | undefined> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof TenantError) throw error;
      const { name = 'Error', message = String(error) } = error as { name?: string; message?: string };
      const refusal = `Amazon SES refused ${what} for the tenant of Organization ${organizationId} (${name}: ${message.split('\n')[0]})`;
      const { local } = this.settings;
      // Locally, an endpoint that answered but does not implement tenants is worth a warning only; nothing listening still fails.
      if (local && !networkErrorCode(error) && !(error instanceof NotFoundException)) {
        local.warn(`warning: ${refusal}; continuing (local stack)`);
        return undefined;
      }
      throw new TenantError(refusal, { cause: error });
    }
  }
}

/**
 * The tenant settings of this target, or undefined when tenants are off: on for a deployed table,
 * off for the local stack, and SES_TENANTS=true|false decides either way.
 */
export function tenantSettingsFor(target: Target, env: Env, warn: (line: string) => void = () => undefined): TenantSettings | undefined {
  const read = new SettingsReader(fromEnv(env));
  const deployed = !target.local && !isEmulated(target);
  const enabled = read.boolean('SES_TENANTS', deployed);
  const policy = read.text('SES_TENANT_REPUTATION_POLICY', 'standard');
  if (!(REPUTATION_POLICIES as readonly string[]).includes(policy)) read.problem(`SES_TENANT_REPUTATION_POLICY must be one of ${REPUTATION_POLICIES.join(', ')}, got "${policy}"`);
  const configurationSet = read.text('SES_CONFIGURATION_SET');
  // Without its configuration set a tenant cannot send the service's mail (every SendEmail names the set).
  if (enabled && deployed && !configurationSet) read.problem('SES tenants of a deployed table need SES_CONFIGURATION_SET (the stack output ConfigurationSetName)');
  read.finish((message) => new InvalidArgumentError(message));
  if (!enabled) return undefined;
  return {
    configurationSet,
    reputationPolicy: policy as ReputationPolicy,
    ...(!deployed && { local: { region: target.region ?? DEFAULTS.region, account: LOCAL_ACCOUNT, warn } }),
  };
}

/** The SES v2 client of this target (its SES endpoint, placeholder credentials on this machine). */
export function sesClientFor(target: Target, env: Env): SESv2Client {
  const endpoint = sesEndpointOf(target, env);
  const credentials = endpoint ? placeholderCredentials(process.env, [endpoint]) : undefined;
  return new SESv2Client({
    ...(target.region && { region: target.region }),
    ...(endpoint && { endpoint }),
    ...(credentials && { credentials }),
    maxAttempts: 3,
  });
}

/** The tenants of this target with a client of their own (the local stack's way), or undefined when they are off. */
export function tenantsFor(target: Target, env: Env, warn: (line: string) => void = () => undefined): SesTenants | undefined {
  const settings = tenantSettingsFor(target, env, warn);
  return settings && new SesTenants(sesClientFor(target, env), settings);
}
