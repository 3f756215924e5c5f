/**
 * A per-instance cache in front of the access store, so a warm function authenticates without
 * a database round trip. Entries live `AUTH_CACHE_SECONDS` (so a rotated or revoked key stops
 * working within that time); unknown keys are remembered briefly too, so a flood of bad keys
 * cannot turn into a flood of reads.
 */
import { LRUCache } from 'lru-cache';
import type { AccessLookup, AccessStore, KeyRecord, OrganizationAccess } from './ports';

export interface AccessCacheOptions {
  readonly ttlSeconds: number;
  /** How long an unknown key is remembered; capped at ttlSeconds. */
  readonly negativeTtlSeconds?: number;
  readonly maxEntries?: number;
  /** Milliseconds clock; tests pass a virtual one. */
  readonly now?: () => number;
}

const MISSING = Symbol('missing');
type Entry<T> = T | typeof MISSING;

export class CachedAccessStore implements AccessStore {
  private readonly keys: LRUCache<string, Entry<KeyRecord>>;
  private readonly organizations: LRUCache<string, Entry<OrganizationAccess>>;
  private readonly negativeTtlMs: number;

  constructor(
    private readonly inner: AccessStore,
    options: AccessCacheOptions,
  ) {
    const ttl = options.ttlSeconds * 1000;
    const max = options.maxEntries ?? 10_000;
    this.negativeTtlMs = Math.min(ttl, (options.negativeTtlSeconds ?? 5) * 1000);
    const perf = options.now ? { now: options.now } : undefined;
    // ttlResolution 0: read the clock on every check (a cached "now" would outlive a virtual clock).
    // Bounded through maxSize with every entry counting 1, not through `max`: the same bound and
    // the same least-recently-used eviction, but `max` makes lru-cache allocate all its slots up
    // front, which cost about 8 ms of every cold start for two caches of 10,000.
    const bound = { maxSize: max, sizeCalculation: () => 1 };
    this.keys = new LRUCache({ ...bound, ttl, ttlResolution: 0, ...(perf && { perf }) });
    this.organizations = new LRUCache({ ...bound, ttl, ttlResolution: 0, ...(perf && { perf }) });
  }

  async lookup(keyHash: string | undefined, organizationId: string | undefined): Promise<AccessLookup> {
    const cachedKey = keyHash === undefined ? undefined : this.keys.get(keyHash);
    const cachedOrg = organizationId === undefined ? undefined : this.organizations.get(organizationId);
    const needKey = keyHash !== undefined && cachedKey === undefined;
    const needOrg = organizationId !== undefined && cachedOrg === undefined;

    let fetched: AccessLookup = {};
    if (needKey || needOrg) {
      fetched = await this.inner.lookup(needKey ? keyHash : undefined, needOrg ? organizationId : undefined);
      if (needKey) this.remember(this.keys, keyHash, fetched.key);
      if (needOrg) this.remember(this.organizations, organizationId, fetched.organization);
    }
    const key = needKey ? fetched.key : cachedKey === MISSING ? undefined : cachedKey;
    const organization = needOrg ? fetched.organization : cachedOrg === MISSING ? undefined : cachedOrg;
    return { ...(key && { key }), ...(organization && { organization }) };
  }

  private remember<T extends object>(cache: LRUCache<string, Entry<T>>, id: string, value: T | undefined): void {
    if (value === undefined) cache.set(id, MISSING, { ttl: this.negativeTtlMs });
    else cache.set(id, value);
  }
}
