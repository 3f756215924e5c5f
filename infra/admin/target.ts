/**
 * Which table, where: the admin CLI's one decision about its target, made from its options and
 * the environment once per command (`resolveTarget`); the clients that follow from it are built
 * by the admin context (admin-context.ts). Apart from it so that the pieces it configures
 * (ses-tenants.ts, user-pool.ts) can name a target without importing the context.
 */
import { LOOPBACK, endpointFrom, isLoopback, localTableName, portFrom, regionFrom } from '../local/settings';

type Env = Readonly<Record<string, string | undefined>>;

/** The local stack's table unless `--table` names a deployed one. */
export interface Target {
  readonly tableName: string;
  readonly region: string | undefined;
  readonly endpoint: string | undefined;
  readonly local: boolean;
}

export interface TargetOptions {
  readonly table?: string;
  readonly region?: string;
}

export function resolveTarget(options: TargetOptions, env: Env): Target {
  const endpoint = endpointFrom(env, 'DYNAMODB_ENDPOINT');
  if (options.table) {
    // A deployed table: the standard AWS chain decides credentials and, without --region, the region.
    // An emulator needs some region to sign with, and any will do.
    const region =
      options.region ?? (env.AWS_REGION?.trim() || env.AWS_DEFAULT_REGION?.trim() || (endpoint && isLoopback(endpoint) ? regionFrom(env) : undefined));
    return { tableName: options.table, region, endpoint, local: false };
  }
  return {
    tableName: localTableName(env),
    region: options.region ?? regionFrom(env),
    endpoint: endpoint ?? `http://${LOOPBACK}:${portFrom(env, 'DYNAMODB_PORT')}`,
    local: true,
  };
}

/** Where this target's Amazon SES calls go: SES_ENDPOINT, locally the local stack's SES port, else SES's own endpoint. */
export function sesEndpointOf(target: Target, env: Env): string | undefined {
  return endpointFrom(env, 'SES_ENDPOINT') ?? (target.local ? `http://${LOOPBACK}:${portFrom(env, 'SES_PORT')}` : undefined);
}

/** A deployed stack played by an emulator on this machine (a loopback DynamoDB endpoint with --table). */
export function isEmulated(target: Target): boolean {
  return !target.local && target.endpoint !== undefined && isLoopback(target.endpoint);
}
