/**
 * Service configuration, read once from the environment when a function starts.
 *
 * Every setting has the same name locally and in Lambda, and every default lives here. A missing
 * or malformed value stops start-up with a message naming the variable: a typo in a deployment
 * must fail the first invocation loudly, not send mail with a silently different limit.
 */

export interface Config {
  /** DynamoDB table holding users, Organizations, keys and (later) idempotency records. */
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
  /** How long SES throttling may be retried when the runtime gives no deadline (the local stack). */
  readonly sendDeadlineMs: number;
  /** Base of the `type` URI of problem documents. */
  readonly problemTypeBase: string;
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
  // Measured with `npm run bench` (README, Performance): 100 messages at 50 ms SES latency take
  // ~400 ms at 16, ~250 ms at 32 and ~200 ms at 48 or 64, where the SDK's own CPU per call, not
  // SES, sets the pace. Lambda's fraction of a vCPU gets there sooner; beyond 32, more in flight
  // mostly adds sockets and SES throttling pressure.
  sendConcurrency: 32,
  authCacheSeconds: 30,
  sendDeadlineMs: 25_000,
  problemTypeBase: 'https://email-send-api.example/problems/',
} as const;

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];

  const text = (name: string, fallback?: string): string | undefined => {
    const value = env[name]?.trim();
    if (value) return value;
    return fallback;
  };

  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const raw = text(name);
    if (raw === undefined) return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
      return fallback;
    }
    return Number(raw);
  };

  const url = (name: string): string | undefined => {
    const raw = text(name);
    if (raw === undefined) return undefined;
    if (!URL.canParse(raw)) problems.push(`${name} must be a URL, got "${raw}"`);
    return raw;
  };

  const tableName = text('TABLE_NAME');
  if (tableName === undefined) problems.push('TABLE_NAME is required (the DynamoDB table name)');

  const config: Config = {
    tableName: tableName ?? '',
    region: text('AWS_REGION', text('AWS_DEFAULT_REGION', DEFAULTS.region)) ?? DEFAULTS.region,
    dynamodbEndpoint: url('DYNAMODB_ENDPOINT'),
    sesEndpoint: url('SES_ENDPOINT'),
    sesConfigurationSet: text('SES_CONFIGURATION_SET'),
    maxMessages: integer('MAX_MESSAGES', DEFAULTS.maxMessages, 1, 10_000),
    maxBodyBytes: integer('MAX_BODY_BYTES', DEFAULTS.maxBodyBytes, 1024, 6 * 1024 * 1024),
    sendConcurrency: integer('SEND_CONCURRENCY', DEFAULTS.sendConcurrency, 1, 256),
    authCacheSeconds: integer('AUTH_CACHE_SECONDS', DEFAULTS.authCacheSeconds, 0, 60),
    sendDeadlineMs: integer('SEND_DEADLINE_MS', DEFAULTS.sendDeadlineMs, 100, 900_000),
    problemTypeBase: url('PROBLEM_TYPE_BASE') ?? DEFAULTS.problemTypeBase,
  };

  if (problems.length > 0) {
    throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  }
  return config;
}
