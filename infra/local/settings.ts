/**
 * The local stack's own settings (ports, data folder, table name), shared by `npm start` and the
 * admin command line so the two always point at the same place. The service's settings
 * (MAX_MESSAGES, AUTH_CACHE_SECONDS, ...) are not here: the handler reads those itself.
 */
import { fileURLToPath } from 'node:url';
import { regionFrom } from '../../functions/shared/runtime/config';
import type { Credentials } from '../../functions/shared/runtime/clients';
import { SettingsReader, fromEnv } from '../../functions/shared/runtime/settings-reader';

type Env = Readonly<Record<string, string | undefined>>;

export { regionFrom };
export const LOCAL_TABLE_NAME = 'email-send-api-local';
export const LOOPBACK = '127.0.0.1';

export const DEFAULT_PORTS = { PORT: 3000, DYNAMODB_PORT: 8000, SES_PORT: 8005, OIDC_PORT: 8010 } as const;
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

/** Reads one local setting with the service's own reader; a bad value throws at once, naming it. */
function readOne<T>(env: Env, read: (reader: SettingsReader) => T): T {
  const reader = new SettingsReader(fromEnv(env));
  const value = read(reader);
  reader.finish((message) => new LocalSettingError(message));
  return value;
}

export function portFrom(env: Env, name: PortVariable): number {
  return readOne(env, (read) => read.port(name, DEFAULT_PORTS[name]));
}

export function endpointFrom(env: Env, name: 'DYNAMODB_ENDPOINT' | 'SES_ENDPOINT'): string | undefined {
  return readOne(env, (read) => read.endpoint(name));
}

/** SES_MAX_SEND_RATE, the rate the local stack enforces in front of its SES emulator (none when unset). */
export function maxSendRateFrom(env: Env): number | undefined {
  return readOne(env, (read) => read.decimal('SES_MAX_SEND_RATE', 0.1, 100_000));
}

export function localTableName(env: Env): string {
  return readOne(env, (read) => read.text('TABLE_NAME', LOCAL_TABLE_NAME));
}

export function isLoopback(endpoint: string): boolean {
  const host = new URL(endpoint).hostname;
  return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * The emulators accept any credentials, but the SDK refuses to sign without some, and a
 * developer's own profile (an expired SSO session, say) must not break a purely local run. So
 * when every endpoint is on this machine and no credentials were chosen explicitly, placeholder
 * ones are handed to the clients. Anything else: undefined, and the SDK's own chain decides.
 */
export function placeholderCredentials(env: Env, endpoints: readonly string[]): Credentials | undefined {
  const read = new SettingsReader(fromEnv(env));
  if (read.text('AWS_ACCESS_KEY_ID') || read.text('AWS_PROFILE')) return undefined;
  if (!endpoints.every(isLoopback)) return undefined;
  return { accessKeyId: 'local', secretAccessKey: 'local' };
}
