/**
 * A bounded in-memory cache whose entries expire: mnemonist's `LRUMap` (the least recently used
 * entry goes when it is full; a `Map` inside, so any string is a safe key) with an expiry kept
 * beside each value. mnemonist is what the AWS SDK's DynamoDB client already loads for its
 * endpoint cache, so the functions' cold start reads almost nothing more for it; lru-cache, used
 * before, was 19 KiB more to parse and loaded Node's `perf_hooks` and `diagnostics_channel` at
 * start-up (docs/performance.md, "Cold start").
 *
 * An expired entry is never answered; it stays in its slot until it is set again or pushed out,
 * so the bound holds whatever the clock does.
 */
import LRUMap from 'mnemonist/lru-map';

export interface ExpiringCacheOptions {
  /** Entries kept at most. */
  readonly max: number;
  /** How long an entry lives unless `set` says otherwise; absent: until it is pushed out. */
  readonly ttlMs?: number;
  /** Milliseconds clock; tests pass a virtual one. */
  readonly now?: () => number;
}

interface Entry<V> {
  readonly value: V;
  readonly expiresAt: number;
}

export class ExpiringCache<K, V> {
  private readonly entries: LRUMap<K, Entry<V>>;
  private readonly now: () => number;

  constructor(private readonly options: ExpiringCacheOptions) {
    this.entries = new LRUMap(options.max);
    this.now = options.now ?? Date.now;
  }

  /** The value, if it is there and has not expired; it becomes the most recently used. */
  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    return entry !== undefined && entry.expiresAt > this.now() ? entry.value : undefined;
  }

  /** Keeps `value` for `ttlMs` (the cache's own unless given); nothing is kept for a ttl of 0 or less. */
  set(key: K, value: V, ttlMs: number | undefined = this.options.ttlMs): void {
    if (ttlMs !== undefined && ttlMs <= 0) return;
    this.entries.set(key, { value, expiresAt: ttlMs === undefined ? Infinity : this.now() + ttlMs });
  }

  /** Replaces the value of an entry that has not expired, which keeps its expiry; otherwise nothing. */
  replace(key: K, value: V): void {
    const entry = this.entries.peek(key);
    if (entry !== undefined && entry.expiresAt > this.now()) this.entries.set(key, { value, expiresAt: entry.expiresAt });
  }
}
