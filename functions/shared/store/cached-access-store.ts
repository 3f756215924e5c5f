/**
 * A per-instance cache in front of the access store, so a warm function authenticates without
 * a database round trip. Every entry, found or not, lives `AUTH_CACHE_SECONDS` (so a rotated or
 * revoked key stops working within that time).
 *
 * Only a yes is answered from memory when the caller's membership is asked about: a refusal
 * (Organization unknown, or the caller not a member) is always read again. Otherwise a 403 for an
 * Organization someone on this instance used recently came from memory while one for an unknown
 * Organization cost a round trip, and the difference told any caller with a valid key which
 * Organizations are in use (security audit round 2, finding 7). Now every 403 costs exactly one
 * read; and a member just added gets in at once.
 *
 * Unknown keys are remembered too, so a flood of one bad key cannot turn into a flood of reads,
 * but in a cache of their own: a flood of forged keys can only push out other forged keys, never
 * a real caller's entry.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ExpiringCache } from '../runtime/expiring-cache';
import { DynamoDbAccessStore } from './dynamodb-access-store';
import type { AccessLookup, AccessStore, KeyRecord, LookupOptions, OrganizationAccess } from './ports';

export interface AccessCacheOptions {
  readonly ttlSeconds: number;
  readonly maxEntries?: number;
  /** Milliseconds clock; tests pass a virtual one. */
  readonly now?: () => number;
}

const MISSING = Symbol('missing');
type Entry<T> = T | typeof MISSING;

export class CachedAccessStore implements AccessStore {
  private readonly keys: ExpiringCache<string, KeyRecord>;
  private readonly unknownKeys: ExpiringCache<string, typeof MISSING>;
  private readonly organizations: ExpiringCache<string, Entry<OrganizationAccess>>;

  constructor(
    private readonly inner: AccessStore,
    options: AccessCacheOptions,
  ) {
    const settings = { max: options.maxEntries ?? 10_000, ttlMs: options.ttlSeconds * 1000, ...(options.now && { now: options.now }) };
    this.keys = new ExpiringCache(settings);
    this.unknownKeys = new ExpiringCache(settings);
    this.organizations = new ExpiringCache(settings);
  }

  async lookup(keyHash: string | undefined, organizationId: string | undefined, options: LookupOptions = {}): Promise<AccessLookup> {
    const cachedKey = keyHash === undefined ? undefined : (this.keys.get(keyHash) ?? this.unknownKeys.get(keyHash));
    let cachedOrg = organizationId === undefined ? undefined : this.organizations.get(organizationId);
    if (options.memberId !== undefined && (cachedOrg === MISSING || (cachedOrg && !cachedOrg.members.has(options.memberId)))) cachedOrg = undefined;
    const needKey = keyHash !== undefined && cachedKey === undefined;
    const needOrg = organizationId !== undefined && cachedOrg === undefined;

    let fetched: AccessLookup = {};
    if (needKey || needOrg) {
      fetched = await this.inner.lookup(needKey ? keyHash : undefined, needOrg ? organizationId : undefined);
      if (needKey) {
        if (fetched.key) this.keys.set(keyHash, fetched.key);
        else this.unknownKeys.set(keyHash, MISSING);
      }
      if (needOrg) this.organizations.set(organizationId, fetched.organization ?? MISSING);
    }
    const key = needKey ? fetched.key : cachedKey === MISSING ? undefined : cachedKey;
    const organization = needOrg ? fetched.organization : cachedOrg === MISSING ? undefined : cachedOrg;
    return { ...(key && { key }), ...(organization && { organization }) };
  }

  /** Recorded, and remembered with the cached key, so this instance writes it once an hour at most. */
  async recordUse(keyHash: string, hour: string): Promise<void> {
    const cached = this.keys.get(keyHash);
    if (cached) this.keys.replace(keyHash, { ...cached, lastUsedAt: hour });
    await this.inner.recordUse(keyHash, hour);
  }
}

/** The access store every API-key function uses: DynamoDB, behind the cache unless AUTH_CACHE_SECONDS is 0. */
export function createAccessStore(client: DynamoDBDocumentClient, config: { readonly tableName: string; readonly authCacheSeconds: number }): AccessStore {
  const store = new DynamoDbAccessStore(client, config.tableName);
  return config.authCacheSeconds > 0 ? new CachedAccessStore(store, { ttlSeconds: config.authCacheSeconds }) : store;
}
