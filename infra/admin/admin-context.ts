/**
 * The admin CLI's one admin context: where a command works (the target, resolved once from the
 * options and the environment) and the clients it may need there, each built the first time it
 * is asked for and then reused: the table (`store`), Amazon SES (`ses`, shared by the tenant and
 * identity calls), the SES tenants (`tenants`, none when they are off), the sender identities
 * in SES (`identities`), the webhook sealer
 * (`sealer`), the settings page's user pool (`userPool`) and what cancelling scheduled messages
 * reaches (`cancelling`, cancelling.ts). The CLI frame (cli.ts) makes one per
 * command, hands it to the command's action and closes it after.
 */
import { CognitoIdentityProviderClient } from '@aws-sdk/client-cognito-identity-provider';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { SESv2Client } from '@aws-sdk/client-sesv2';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { WebhookScheduleNotices } from '../../functions/shared/schedules/notices';
import { ScheduleDisarmer } from '../../functions/shared/schedules/timer';
import { InvalidArgumentError } from '../../functions/shared/store/records';
import { SqsWebhookQueue } from '../../functions/shared/webhooks/queue';
import { DynamoDbWebhookStore } from '../../functions/shared/webhooks/webhook-store';
import type { SecretSealer } from '../../functions/shared/webhooks/sealing';
import { KmsSealer } from '../../functions/shared/webhooks/sealing';
import { localSealer } from '../local/sealing-key';
import { DEFAULTS } from '../../functions/shared/runtime/config';
import { endpointFrom, placeholderCredentials } from '../local/settings';
import { DynamoDbAdminStore } from './admin-store';
import type { AdminCancelling } from './cancelling';
import { adminCancelling, stackReachFrom } from './cancelling';
import { SesIdentities } from './ses-identities';
import type { SesTenants } from './ses-tenants';
import { SesTenants as Tenants, sesClientFor, tenantSettingsFor } from './ses-tenants';
import type { Target, TargetOptions } from './target';
import { isEmulated, resolveTarget } from './target';
import { UserPool, userPoolRegion } from './user-pool';

type Env = Readonly<Record<string, string | undefined>>;

/** Builds `make()` the first time it is called, then answers the same value. */
function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}

export class AdminContext implements Target {
  readonly tableName: string;
  readonly region: string | undefined;
  readonly endpoint: string | undefined;
  readonly local: boolean;
  private readonly closers: (() => void)[] = [];

  constructor(
    readonly target: Target,
    readonly env: Env,
    /** Takes warnings for the operator (stderr). */
    readonly warn: (line: string) => void,
  ) {
    ({ tableName: this.tableName, region: this.region, endpoint: this.endpoint, local: this.local } = target);
  }

  /** The table. Not the Lambda's client: with --table the region may come from the AWS profile, which only the SDK's own resolution finds, and an operator can wait longer than a request. */
  readonly store = once(() => {
    // The SDK reads credentials from the process environment, whatever `env` says.
    const credentials = this.endpoint ? placeholderCredentials(process.env, [this.endpoint]) : undefined;
    const client = new DynamoDBClient({
      ...(this.region && { region: this.region }),
      ...(credentials && { credentials }),
      ...(this.endpoint && { endpoint: this.endpoint }),
      maxAttempts: 3,
    });
    this.closers.push(() => client.destroy());
    return new DynamoDbAdminStore(DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } }), this.tableName);
  });

  /** Amazon SES v2 at this target's SES endpoint (SES_ENDPOINT; locally the local stack's SES port). */
  readonly ses = once((): SESv2Client => {
    const client = sesClientFor(this.target, this.env);
    this.closers.push(() => client.destroy());
    return client;
  });

  /** The Organizations' SES tenants, or undefined when they are off (on for a deployed table; SES_TENANTS decides). */
  readonly tenants = once((): SesTenants | undefined => {
    const settings = tenantSettingsFor(this.target, this.env, this.warn);
    return settings && new Tenants(this.ses(), settings);
  });

  /**
   * The Organizations' sender identities in Amazon SES: managed there for a deployed table, and
   * for an emulated one (a loopback DYNAMODB_ENDPOINT) only when SES_ENDPOINT names its SES too;
   * the local stack's count as verified at once.
   */
  readonly identities = once((): SesIdentities => {
    const managed = !this.local && (!isEmulated(this.target) || endpointFrom(this.env, 'SES_ENDPOINT') !== undefined);
    return new SesIdentities(managed ? this.ses() : undefined, this.region ?? DEFAULTS.region);
  });

  private readonly kms = once(() => {
    const client = new KMSClient({ ...(this.region && { region: this.region }), maxAttempts: 3 });
    this.closers.push(() => client.destroy());
    return client;
  });

  /** Seals webhook secrets: locally the local stack's key; a deployed table's need the stack's KMS key (output WebhookKeyArn). */
  sealer(kmsKey: string | undefined): SecretSealer {
    if (this.local) return localSealer(this.env);
    const keyId = kmsKey ?? this.env.WEBHOOK_KMS_KEY_ID?.trim();
    if (!keyId) throw new InvalidArgumentError('a deployed table needs --kms-key (the stack output WebhookKeyArn), or WEBHOOK_KMS_KEY_ID');
    return new KmsSealer(this.kms(), keyId);
  }

  /**
   * How this command cancels scheduled messages: for a deployed table with WEBHOOK_QUEUE_URL and
   * SCHEDULE_GROUP_NAME, deleting the one-time schedule and queueing `email.cancelled` at once;
   * otherwise leaving the notice owed, for the schedule's timer to tell (cancelling.ts).
   */
  readonly cancelling = once((): AdminCancelling => {
    const store = this.store();
    const reach = this.local ? undefined : stackReachFrom(this.env);
    if (!reach) return adminCancelling(store, undefined, this.warn);
    const sqs = new SQSClient({ ...(this.region && { region: this.region }), ...this.endpointOptions('AWS_ENDPOINT_URL_SQS'), maxAttempts: 3 });
    const scheduler = new SchedulerClient({ ...(this.region && { region: this.region }), ...this.endpointOptions('AWS_ENDPOINT_URL_SCHEDULER'), maxAttempts: 3 });
    this.closers.push(() => sqs.destroy(), () => scheduler.destroy());
    const logger = {
      // The notice is lost, not the cancellation: the operator hears why (no key or secret is in it).
      warn: (message: unknown, ...extra: unknown[]) => {
        const { scheduleId, error } = (extra[0] ?? {}) as { scheduleId?: string; error?: Error };
        this.warn(`${String(message)} (scheduled message ${scheduleId}): ${error?.message ?? 'unknown error'}`);
      },
    };
    const notices = new WebhookScheduleNotices(new DynamoDbWebhookStore(store.client, store.tableName), new SqsWebhookQueue(sqs, reach.webhookQueueUrl), logger);
    return adminCancelling(store, { timer: new ScheduleDisarmer(scheduler, reach.scheduleGroupName), notices }, this.warn);
  });

  /** An emulator's endpoint from the SDK's own variable `name`, read from this command's environment like every other setting, with its placeholder credentials. */
  private endpointOptions(name: string): { endpoint?: string; credentials?: { accessKeyId: string; secretAccessKey: string } } {
    const endpoint = this.env[name]?.trim() || undefined;
    // The SDK reads credentials from the process environment, whatever `env` says.
    const credentials = endpoint ? placeholderCredentials(process.env, [endpoint]) : undefined;
    return { ...(endpoint && { endpoint }), ...(credentials && { credentials }) };
  }

  private readonly pools = new Map<string, UserPool>();

  /** The settings page's user pool named by `--user-pool-id` or USER_POOL_ID, or undefined when neither is given. */
  userPool(option: string | undefined): UserPool | undefined {
    const id = option ?? (this.env.USER_POOL_ID?.trim() || undefined);
    if (id === undefined) return undefined;
    let pool = this.pools.get(id);
    if (!pool) {
      const client = new CognitoIdentityProviderClient({ region: userPoolRegion(id), ...this.endpointOptions('AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER'), maxAttempts: 3 });
      this.closers.push(() => client.destroy());
      pool = new UserPool(id, client);
      this.pools.set(id, pool);
    }
    return pool;
  }

  /** Closes every client built. */
  close(): void {
    for (const close of this.closers.splice(0)) close();
  }
}

/** The context of one command: its target from `--table`/`--region` and the environment. */
export function resolveAdminContext(options: TargetOptions, env: Env, warn: (line: string) => void): AdminContext {
  return new AdminContext(resolveTarget(options, env), env, warn);
}
