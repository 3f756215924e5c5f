/**
 * Service configuration, read once from the environment when a function starts.
 *
 * Every setting has the same name locally and in Lambda, and every default lives here. A missing
 * or malformed value stops start-up with a message naming the variable: a typo in a deployment
 * must fail the first invocation loudly, not send mail with a silently different limit.
 */
import type { ReputationThresholds } from '../domain/reputation';
import { SettingsReader, fromEnv } from './settings-reader';

export interface Config {
  /** DynamoDB table holding users, Organizations, keys and idempotency records. */
  readonly tableName: string;
  readonly region: string;
  /** Endpoint overrides, for the local emulators or a proxy; undefined means the AWS default. */
  readonly dynamodbEndpoint: string | undefined;
  readonly sesEndpoint: string | undefined;
  /** Amazon SES configuration set applied to every message, if any. */
  readonly sesConfigurationSet: string | undefined;
  readonly maxMessages: number;
  readonly maxBodyBytes: number;
  readonly sendConcurrency: number;
  /** 0 turns the auth cache off. */
  readonly authCacheSeconds: number;
  /**
   * The account's maximum send rate (recipients per second) when set; otherwise it is read from
   * SES (`GetAccount`), and an endpoint that cannot say means no limit.
   */
  readonly sesMaxSendRate: number | undefined;
  /** How long SES throttling may be retried when the runtime gives no deadline (the local stack). */
  readonly sendDeadlineMs: number;
  /** Base of the `type` URI of problem documents. */
  readonly problemTypeBase: string;
  /** How long a message's delivery states are kept (DynamoDB TTL), in days. */
  readonly statusRetentionDays: number;
  /** The SQS queue webhook deliveries wait in (the events function sends to it); unset locally. */
  readonly webhookQueueUrl: string | undefined;
  /**
   * The SQS queue SES's events reach the events function through; test mode (docs/keys.md) puts
   * its simulated events there. Unset locally, where the local stack hands them over itself.
   */
  readonly sesEventsQueueUrl: string | undefined;
  /** The KMS key that seals webhook signing secrets; unset locally, where a local key does. */
  readonly webhookKmsKeyId: string | undefined;
  /** When an Organization is paused for its bounces and complaints (CONTRACT section 11 item 3). */
  readonly reputation: ReputationThresholds;
  /** Each Organization is an Amazon SES tenant: every SendEmail names it (on in AWS; locally only with SES_TENANTS=true). */
  readonly sesTenants: boolean;
  /** How far ahead a message's `SendAt` may be, in days (CONTRACT section 13). */
  readonly maxScheduleDays: number;
  /**
   * Where scheduled messages wait in AWS (EventBridge Scheduler: the group, the queue each
   * schedule sends to, the role it does so with, and the dead-letter queue for what it cannot
   * deliver). Unset locally, where the local stack's own timer fires schedules.
   */
  readonly scheduler: SchedulerConfig | undefined;
}

export interface SchedulerConfig {
  readonly groupName: string;
  readonly targetArn: string;
  readonly roleArn: string;
  readonly deadLetterArn: string;
  /** The same queue as `targetArn`, which short waits (up to 15 minutes) go to directly. */
  readonly queueUrl: string;
}

/** A configuration variable is missing or malformed. */
export class ConfigError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

export const DEFAULTS = {
  region: 'us-east-1',
  maxMessages: 100,
  maxBodyBytes: 5 * 1024 * 1024,
  // Measured with `npm run bench` (docs/performance.md): 100 messages at 50 ms SES latency take
  // ~400 ms at 16, ~250 ms at 32 and ~200 ms at 48 or 64, where the SDK's own CPU per call, not
  // SES, sets the pace. Lambda's fraction of a vCPU gets there sooner; beyond 32, more in flight
  // mostly adds sockets and SES throttling pressure.
  sendConcurrency: 32,
  authCacheSeconds: 30,
  sendDeadlineMs: 25_000,
  // A path: read against the origin each request was addressed to, where the API serves the pages.
  problemTypeBase: '/problems/',
  statusRetentionDays: 30,
  // Amazon SES's own review thresholds, and enough sends for a rate to mean something.
  reputationBounceRate: 0.05,
  reputationComplaintRate: 0.001,
  reputationMinSends: 200,
  sesTenants: false,
  maxScheduleDays: 30,
} as const;

/** What every function of the service reads: where its table is, and how its problems are named. */
export type StoreConfig = Pick<Config, 'tableName' | 'region' | 'dynamodbEndpoint' | 'problemTypeBase'>;

/** The settings every function shares, read with the function's own reader (problems collected there). */
export function readStoreConfig(read: SettingsReader, env: Env): StoreConfig {
  const tableName = read.text('TABLE_NAME');
  if (tableName === undefined) read.problem(`${read.name('TABLE_NAME')} is required (the DynamoDB table name)`);
  const problemTypeBase = read.text('PROBLEM_TYPE_BASE');
  if (problemTypeBase !== undefined && !URL.canParse(problemTypeBase) && !/^\/(?!\/)/.test(problemTypeBase)) {
    read.problem(`${read.name('PROBLEM_TYPE_BASE')} must be a URL or a path starting with /, got "${problemTypeBase}"`);
  }
  return {
    tableName: tableName ?? '',
    region: regionFrom(env),
    dynamodbEndpoint: read.endpoint('DYNAMODB_ENDPOINT'),
    problemTypeBase: problemTypeBase ?? DEFAULTS.problemTypeBase,
  };
}

/** `label` names a variable in the error's problems (the CDK app names its context key beside it). */
export function loadConfig(env: Env = process.env, label?: (variable: string) => string): Config {
  const read = new SettingsReader(fromEnv(env), label);
  const config: Config = {
    ...readStoreConfig(read, env),
    sesEndpoint: read.endpoint('SES_ENDPOINT'),
    sesConfigurationSet: read.text('SES_CONFIGURATION_SET'),
    maxMessages: read.integer('MAX_MESSAGES', DEFAULTS.maxMessages, 1, 10_000),
    maxBodyBytes: read.integer('MAX_BODY_BYTES', DEFAULTS.maxBodyBytes, 1024, 6 * 1024 * 1024),
    sendConcurrency: read.integer('SEND_CONCURRENCY', DEFAULTS.sendConcurrency, 1, 256),
    authCacheSeconds: read.integer('AUTH_CACHE_SECONDS', DEFAULTS.authCacheSeconds, 0, 60),
    sesMaxSendRate: read.decimal('SES_MAX_SEND_RATE', 0.1, 100_000),
    sendDeadlineMs: read.integer('SEND_DEADLINE_MS', DEFAULTS.sendDeadlineMs, 100, 900_000),
    statusRetentionDays: read.integer('STATUS_RETENTION_DAYS', DEFAULTS.statusRetentionDays, 1, 3_650),
    webhookQueueUrl: read.endpoint('WEBHOOK_QUEUE_URL'),
    webhookKmsKeyId: read.text('WEBHOOK_KMS_KEY_ID'),
    sesEventsQueueUrl: read.endpoint('SES_EVENTS_QUEUE_URL'),
    reputation: {
      bounceRate: read.decimal('REPUTATION_BOUNCE_RATE', 0.000001, 1) ?? DEFAULTS.reputationBounceRate,
      complaintRate: read.decimal('REPUTATION_COMPLAINT_RATE', 0.000001, 1) ?? DEFAULTS.reputationComplaintRate,
      minSends: read.integer('REPUTATION_MIN_SENDS', DEFAULTS.reputationMinSends, 1, 100_000_000),
    },
    sesTenants: read.boolean('SES_TENANTS', DEFAULTS.sesTenants),
    maxScheduleDays: read.integer('MAX_SCHEDULE_DAYS', DEFAULTS.maxScheduleDays, 1, 365),
    scheduler: readScheduler(read),
  };
  read.finish((message) => new ConfigError(`Invalid configuration: ${message}`));
  return config;
}

const SCHEDULER_VARIABLES = ['SCHEDULE_GROUP_NAME', 'SCHEDULE_TARGET_ARN', 'SCHEDULER_ROLE_ARN', 'SCHEDULE_DEAD_LETTER_ARN', 'SCHEDULE_QUEUE_URL'] as const;

/** All five scheduler settings, or none (then schedules are the local stack's to fire). */
export function readScheduler(read: SettingsReader): SchedulerConfig | undefined {
  const values = SCHEDULER_VARIABLES.map((name) => read.text(name));
  if (values.every((value) => !value)) return undefined;
  const [groupName, targetArn, roleArn, deadLetterArn, queueUrl] = values;
  if (!groupName || !targetArn || !roleArn || !deadLetterArn || !queueUrl) {
    read.problem(`${SCHEDULER_VARIABLES.map((name) => read.name(name)).join(', ')} must be set together, or none of them`);
    return undefined;
  }
  return { groupName, targetArn, roleArn, deadLetterArn, queueUrl };
}

/** The AWS region as the SDK would pick it from the environment, else the one default. */
export function regionFrom(env: Env): string {
  const read = new SettingsReader(fromEnv(env));
  return read.text('AWS_REGION') ?? read.text('AWS_DEFAULT_REGION') ?? DEFAULTS.region;
}
