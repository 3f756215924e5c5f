/**
 * The deployment's settings, read from CDK context (`cdk.json`, or `-c key=value` on the command
 * line) and checked before anything is built: a typo in a deployment must fail `cdk synth`, not
 * the first request in AWS.
 *
 * Infrastructure settings have their defaults here and are listed in `cdk.json` with the same
 * values (a test keeps the two in step). The service's own settings default to
 * `functions/shared/runtime/config.ts`, so the function gets exactly what it would assume locally.
 */
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { DEFAULTS, loadConfig } from '../../functions/shared/runtime/config';
import { SettingsReader } from '../../functions/shared/runtime/settings-reader';

/** Context keys with their defaults; each key is documented on `StackSettings`. */
export const INFRA_DEFAULTS = {
  stackName: 'EmailSendApi',
  // Concurrency is rate x duration: even if every request ran to the 28 s timeout, 25 requests a
  // second stay under the default regional Lambda limit of 1000 (25 x 28 = 700). One request may
  // carry 100 messages, so this is far above what a new SES account (14 messages/s) can send.
  throttleRateLimit: 25,
  throttleBurstLimit: 50,
  functionMemoryMb: 1024,
  logRetentionDays: 30,
  alarmTopicArn: '',
  serverErrorRateAlarmPercent: 5,
  // A request normally answers in one or two seconds; a sustained p99 of 10 s means SES
  // throttling or a slow dependency is pushing requests towards the 28 s limit.
  latencyP99AlarmMs: 10_000,
  customDomainName: '',
  customDomainCertificateArn: '',
  // Open and click tracking's custom redirect domain (SES's TrackingOptions on the tracked
  // configuration sets, HTTPS only); empty: SES's own tracking domain.
  trackingDomain: '',
  // Active X-Ray tracing: Lambda records each invocation (initialisation, invocation, overhead).
  // It costs per trace recorded (after the free tier) and nothing at cold start.
  tracing: true,
  // With tracing, also a subsegment for every DynamoDB and SES call, from the Powertools Tracer.
  // Off by default: loading the X-Ray SDK under it adds about a third of what an SES client alone
  // costs to every cold start of the send function (docs/performance.md, "Cold start").
  traceSdkCalls: false,
  // Keys kept sealed (KMS, bound to their user) so their owner can see them again on the settings
  // page (CONTRACT section 3, item 2). false: nothing is sealed and the page shows a key once.
  apiKeyReveal: true,
  // Sign-in for the settings page: empty means a Cognito user pool made by the stack, whose
  // managed-login domain prefix is derived from the stack id unless given here.
  cognitoDomainPrefix: '',
  // Or an existing OpenID provider (issuer URL and the page's public client there, with
  // {base_url}/settings as its redirect and sign-out URL): then no user pool is made.
  oidcIssuer: '',
  oidcClientId: '',
  // Where Sign out sends the browser when the issuer has no end_session_endpoint; and the origin
  // of its token endpoint when it is not the issuer's (the page's policy must allow both).
  oidcLogoutUrl: '',
  oidcConnectOrigins: '',
  // Each Organization is an Amazon SES tenant (CONTRACT section 11 item 4): every SendEmail names
  // it, and SES applies this managed reputation policy to each tenant the admin CLI creates.
  sesTenants: true,
  sesTenantReputationPolicy: 'standard',
} as const;

/** Context keys for the service settings; unset means the default in `functions/shared/runtime/config.ts`. */
export const SERVICE_CONTEXT_KEYS = {
  maxMessages: 'MAX_MESSAGES',
  maxBodyBytes: 'MAX_BODY_BYTES',
  sendConcurrency: 'SEND_CONCURRENCY',
  authCacheSeconds: 'AUTH_CACHE_SECONDS',
  sendDeadlineMs: 'SEND_DEADLINE_MS',
  problemTypeBase: 'PROBLEM_TYPE_BASE',
  // Unset: the function reads the account's rate from SES (GetAccount).
  sesMaxSendRate: 'SES_MAX_SEND_RATE',
  // Unset: 30 days (functions/shared/runtime/config.ts). Read by the events function.
  statusRetentionDays: 'STATUS_RETENTION_DAYS',
  // Unset: 0.05, 0.001 and 200 (CONTRACT section 11 item 3). Read by the events function.
  reputationBounceRate: 'REPUTATION_BOUNCE_RATE',
  reputationComplaintRate: 'REPUTATION_COMPLAINT_RATE',
  reputationMinSends: 'REPUTATION_MIN_SENDS',
  // Unset: 30 days. How far ahead a message's SendAt may be (docs/scheduled-send.md).
  maxScheduleDays: 'MAX_SCHEDULE_DAYS',
} as const;

export interface StackSettings {
  /** CloudFormation stack name; change it to deploy a second copy (e.g. staging) in one account. */
  readonly stackName: string;
  /** HTTP API stage throttling: steady requests per second and burst, for the whole stage. */
  readonly throttle: { readonly rateLimit: number; readonly burstLimit: number };
  readonly functionMemoryMb: number;
  /** Active X-Ray tracing: Lambda's own segment of each invocation. */
  readonly tracing: boolean;
  /** With `tracing`, the Powertools Tracer in the functions too: a subsegment per DynamoDB and SES call. */
  readonly traceSdkCalls: boolean;
  /** Whether API keys are kept sealed so their owner can see them again (`API_KEY_REVEAL` of the settings functions). */
  readonly apiKeyReveal: boolean;
  /** Retention of the function's logs and the API access logs. */
  readonly logRetention: RetentionDays;
  /** SNS topic that alarms notify (ALARM and OK); none when absent. */
  readonly alarmTopicArn: string | undefined;
  readonly alarms: { readonly serverErrorRatePercent: number; readonly latencyP99Ms: number };
  /** Custom domain for the API; the ACM certificate must be in the stack's region. */
  readonly customDomain: { readonly domainName: string; readonly certificateArn: string } | undefined;
  /** `TRACKING_DOMAIN`: the tracked configuration sets' custom redirect domain; SES's own when absent. */
  readonly trackingDomain: string | undefined;
  /** Who signs in to the settings page: a user pool the stack makes, or an existing issuer. */
  readonly signIn:
    | { readonly kind: 'cognito'; readonly domainPrefix: string | undefined }
    | { readonly kind: 'external'; readonly issuer: string; readonly clientId: string; readonly logoutUrl: string | undefined; readonly connectOrigins: readonly string[] };
  /** The function's service environment, by variable name (MAX_MESSAGES …). */
  readonly serviceEnvironment: Readonly<Record<string, string>>;
  /** SES tenants: on (every SendEmail names the Organization's tenant), with this managed reputation policy. */
  readonly sesTenants: { readonly enabled: boolean; readonly reputationPolicy: 'standard' | 'strict' | 'none' };
}

/**
 * `POWERTOOLS_TRACE_ENABLED` of every function: the Powertools Tracer, and the X-Ray SDK it loads
 * at start-up, only when SDK calls are to be traced, and only under active tracing.
 */
export function powertoolsTraceEnabled(settings: Pick<StackSettings, 'tracing' | 'traceSdkCalls'>): boolean {
  return settings.tracing && settings.traceSdkCalls;
}

/** A context value is missing or malformed. */
export class SettingsError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'SettingsError';
  }
}

const RETENTION_VALUES = new Set<number>(Object.values(RetentionDays).filter((v): v is number => typeof v === 'number'));

export function readSettings(scope: Construct, environment: NodeJS.ProcessEnv = process.env): StackSettings {
  // Values from cdk.json arrive typed; values from `-c key=value` arrive as strings.
  const read = new SettingsReader((key) => scope.node.tryGetContext(key), (key) => `context "${key}"`);

  const stackName = read.text('stackName', INFRA_DEFAULTS.stackName);
  if (!/^[A-Za-z][A-Za-z0-9-]{0,127}$/.test(stackName)) read.problem(`context "stackName" is not a valid stack name: "${stackName}"`);

  const rateLimit = read.integer('throttleRateLimit', INFRA_DEFAULTS.throttleRateLimit, 1, 10_000);
  const burstLimit = read.integer('throttleBurstLimit', INFRA_DEFAULTS.throttleBurstLimit, 1, 5_000);

  // 128 MB steps are not required by Lambda, but 1 MB steps are; the upper bound is Lambda's.
  const functionMemoryMb = read.integer('functionMemoryMb', INFRA_DEFAULTS.functionMemoryMb, 128, 10_240);
  const tracing = read.boolean('tracing', INFRA_DEFAULTS.tracing);
  const traceSdkCalls = read.boolean('traceSdkCalls', INFRA_DEFAULTS.traceSdkCalls);
  const apiKeyReveal = read.boolean('apiKeyReveal', INFRA_DEFAULTS.apiKeyReveal);

  const retentionDays = read.integer('logRetentionDays', INFRA_DEFAULTS.logRetentionDays, 1, 3_653);
  if (!RETENTION_VALUES.has(retentionDays)) {
    read.problem(`context "logRetentionDays" must be one of CloudWatch Logs' periods (${[...RETENTION_VALUES].join(', ')}), got ${retentionDays}`);
  }

  const alarmTopicArn = read.text('alarmTopicArn', INFRA_DEFAULTS.alarmTopicArn);
  if (alarmTopicArn && !/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]+(\.fifo)?$/.test(alarmTopicArn)) {
    read.problem(`context "alarmTopicArn" must be an SNS topic ARN, got "${alarmTopicArn}"`);
  }

  const serverErrorRatePercent = read.integer('serverErrorRateAlarmPercent', INFRA_DEFAULTS.serverErrorRateAlarmPercent, 1, 100);
  const latencyP99Ms = read.integer('latencyP99AlarmMs', INFRA_DEFAULTS.latencyP99AlarmMs, 100, 30_000);

  const domainName = read.text('customDomainName', INFRA_DEFAULTS.customDomainName).toLowerCase();
  const certificateArn = read.text('customDomainCertificateArn', INFRA_DEFAULTS.customDomainCertificateArn);
  if (Boolean(domainName) !== Boolean(certificateArn)) {
    read.problem('context "customDomainName" and "customDomainCertificateArn" must be set together, or neither');
  }
  if (domainName && !DOMAIN_NAME.test(domainName)) {
    read.problem(`context "customDomainName" is not a domain name: "${domainName}"`);
  }
  if (certificateArn && !/^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[A-Za-z0-9-]+$/.test(certificateArn)) {
    read.problem(`context "customDomainCertificateArn" must be an ACM certificate ARN, got "${certificateArn}"`);
  }

  // The one setting also read from the environment (`TRACKING_DOMAIN`), the name the service's
  // users are given for it; the context value wins when both are there.
  const trackingDomain = read.text('trackingDomain', environment.TRACKING_DOMAIN ?? INFRA_DEFAULTS.trackingDomain).toLowerCase();
  if (trackingDomain && !DOMAIN_NAME.test(trackingDomain)) read.problem(`context "trackingDomain" is not a domain name: "${trackingDomain}"`);
  // Its DNS record points at the HTTPS front of SES's tracking domain; the API's points at API Gateway.
  if (trackingDomain && trackingDomain === domainName) read.problem('context "trackingDomain" must differ from "customDomainName" (each needs a DNS record of its own)');

  const signIn = readSignIn(read);

  const tenantsEnabled = read.boolean('sesTenants', INFRA_DEFAULTS.sesTenants);
  const reputationPolicy = read.text('sesTenantReputationPolicy', INFRA_DEFAULTS.sesTenantReputationPolicy);
  if (!['standard', 'strict', 'none'].includes(reputationPolicy)) {
    read.problem(`context "sesTenantReputationPolicy" must be standard, strict or none (SES's managed reputation policies), got "${reputationPolicy}"`);
  }

  const serviceEnvironment: Record<string, string> = {
    MAX_MESSAGES: String(DEFAULTS.maxMessages),
    MAX_BODY_BYTES: String(DEFAULTS.maxBodyBytes),
    SEND_CONCURRENCY: String(DEFAULTS.sendConcurrency),
    AUTH_CACHE_SECONDS: String(DEFAULTS.authCacheSeconds),
    SEND_DEADLINE_MS: String(DEFAULTS.sendDeadlineMs),
    PROBLEM_TYPE_BASE: DEFAULTS.problemTypeBase,
    SES_TENANTS: String(tenantsEnabled),
  };
  /** The context key each service variable was set from. */
  const contextKeyOf = new Map<string, string>();
  for (const [key, variable] of Object.entries(SERVICE_CONTEXT_KEYS)) {
    const value = read.raw(key);
    if (value === undefined) continue;
    if (typeof value !== 'string' && typeof value !== 'number') {
      read.problem(`context "${key}" must be a string or number, got ${JSON.stringify(value)}`);
      continue;
    }
    serviceEnvironment[variable] = String(value);
    contextKeyOf.set(variable, key);
  }
  // The function's own parser is the authority on what it accepts: run it now, so a value the
  // function would reject at start-up stops the deployment instead. Its problems name the context
  // key that was set, with the function's variable beside it.
  try {
    loadConfig({ TABLE_NAME: 'synth-time-check', ...serviceEnvironment }, (variable) => {
      const key = contextKeyOf.get(variable);
      return key === undefined ? variable : `context "${key}" (${variable})`;
    });
  } catch (error) {
    read.problem((error instanceof Error ? error.message : String(error)).replace(/^Invalid configuration: /, ''));
  }

  read.finish((message) => new SettingsError(`Invalid CDK context: ${message}`));
  return {
    stackName,
    throttle: { rateLimit, burstLimit },
    functionMemoryMb,
    tracing,
    traceSdkCalls,
    apiKeyReveal,
    logRetention: retentionDays as RetentionDays,
    alarmTopicArn: alarmTopicArn || undefined,
    alarms: { serverErrorRatePercent, latencyP99Ms },
    customDomain: domainName ? { domainName, certificateArn } : undefined,
    trackingDomain: trackingDomain || undefined,
    signIn,
    serviceEnvironment,
    sesTenants: { enabled: tenantsEnabled, reputationPolicy: reputationPolicy as 'standard' | 'strict' | 'none' },
  };
}

const DOMAIN_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const HTTPS_URL = /^https:\/\/[^\s/?#]+(\/[^\s?#]*)?$/;

function readSignIn(read: SettingsReader): StackSettings['signIn'] {
  const issuer = read.text('oidcIssuer', INFRA_DEFAULTS.oidcIssuer).replace(/\/$/, '');
  const clientId = read.text('oidcClientId', INFRA_DEFAULTS.oidcClientId);
  const logoutUrl = read.text('oidcLogoutUrl', INFRA_DEFAULTS.oidcLogoutUrl);
  const connectOrigins = read.text('oidcConnectOrigins', INFRA_DEFAULTS.oidcConnectOrigins).split(/[\s,]+/).filter(Boolean);
  const domainPrefix = read.text('cognitoDomainPrefix', INFRA_DEFAULTS.cognitoDomainPrefix);
  if (domainPrefix && !/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(domainPrefix)) {
    read.problem(`context "cognitoDomainPrefix" must be lower-case letters, digits and hyphens (at most 63), got "${domainPrefix}"`);
  }
  if (!issuer && !clientId) {
    if (logoutUrl || connectOrigins.length > 0) read.problem('context "oidcLogoutUrl" and "oidcConnectOrigins" go with "oidcIssuer" and "oidcClientId"');
    return { kind: 'cognito', domainPrefix: domainPrefix || undefined };
  }
  if (!issuer || !clientId) read.problem('context "oidcIssuer" and "oidcClientId" must be set together, or neither (then the stack makes a Cognito user pool)');
  // API Gateway's JWT authorizer fetches the issuer's keys over HTTPS only.
  for (const [key, value] of [['oidcIssuer', issuer], ['oidcLogoutUrl', logoutUrl], ...connectOrigins.map((origin) => ['oidcConnectOrigins', origin])] as const) {
    if (value && !HTTPS_URL.test(value)) read.problem(`context "${key}" must be an https URL, got "${value}"`);
  }
  if (domainPrefix) read.problem('context "cognitoDomainPrefix" is for the stack\'s own user pool, which "oidcIssuer" replaces');
  return { kind: 'external', issuer, clientId, logoutUrl: logoutUrl || undefined, connectOrigins };
}
