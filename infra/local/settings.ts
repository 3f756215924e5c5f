/**
 * The local stack's own settings (ports, data folder, table name), shared by `npm start` and the
 * admin command line so the two always point at the same place. The service's settings
 * (MAX_MESSAGES, AUTH_CACHE_SECONDS, ...) are not here: the handler reads those itself.
 */
import { fileURLToPath } from 'node:url';

type Env = Readonly<Record<string, string | undefined>>;

export const LOCAL_TABLE_NAME = 'email-send-api-local';
export const LOCAL_REGION = 'us-east-1';
export const LOOPBACK = '127.0.0.1';

export const DEFAULT_PORTS = { PORT: 3000, DYNAMODB_PORT: 8000, SES_PORT: 8005 } as const;
export type PortVariable = keyof typeof DEFAULT_PORTS;

/** `<repo>/.local`, wherever the command is started from. */
export const DEFAULT_DATA_DIR = fileURLToPath(new URL('../../.local', import.meta.url));

/** A local setting is malformed; the message names the variable. */
export class LocalSettingError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'LocalSettingError';
  }
}

function text(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

export function portFrom(env: Env, name: PortVariable): number {
  const raw = text(env, name);
  if (raw === undefined) return DEFAULT_PORTS[name];
  if (!/^\d+$/.test(raw) || Number(raw) > 65_535) throw new LocalSettingError(`${name} must be a port number from 0 to 65535, got "${raw}"`);
  return Number(raw);
}

export function endpointFrom(env: Env, name: 'DYNAMODB_ENDPOINT' | 'SES_ENDPOINT'): string | undefined {
  const raw = text(env, name);
  if (raw === undefined) return undefined;
  if (!URL.canParse(raw) || !/^https?:$/.test(new URL(raw).protocol)) throw new LocalSettingError(`${name} must be an http(s) URL, got "${raw}"`);
  return raw;
}

export function localTableName(env: Env): string {
  return text(env, 'TABLE_NAME') ?? LOCAL_TABLE_NAME;
}

export function regionFrom(env: Env): string {
  return text(env, 'AWS_REGION') ?? text(env, 'AWS_DEFAULT_REGION') ?? LOCAL_REGION;
}

export function isLoopback(endpoint: string): boolean {
  const host = new URL(endpoint).hostname;
  return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * The emulators accept any credentials, but the SDK refuses to sign without some, and a
 * developer's own profile (an expired SSO session, say) must not break a purely local run. So
 * when every endpoint is on this machine and no credentials were chosen explicitly, placeholder
 * ones go into the environment, where the SDK (and the handler's clients) will find them.
 */
export function usePlaceholderCredentials(env: Record<string, string | undefined>, endpoints: readonly string[]): boolean {
  if (text(env, 'AWS_ACCESS_KEY_ID') || text(env, 'AWS_PROFILE')) return false;
  if (!endpoints.every(isLoopback)) return false;
  env.AWS_ACCESS_KEY_ID = 'local';
  env.AWS_SECRET_ACCESS_KEY = 'local';
  delete env.AWS_SESSION_TOKEN;
  return true;
}
