/**
 * A bounded in-memory cache whose entries expire: a `Map` kept in order of use (a `Map` iterates in
 * insertion order, so an entry read is moved to the end, and the first is the least recently used,
 * the one that goes when the cache is full), with an expiry kept beside each value. Any string is a
 * safe key. It was mnemonist's `LRUMap`, whose CommonJS module V8 parsed twice at every cold start
 * and which preallocated arrays of `max` slots for each cache: 0.3 to 0.5 ms of the send function's
 * cold start (docs/performance.md, "Cold start"), for what a `Map` does in a few lines.
 *
 * An expired entry is never answered, by `get`, `peek` or `has`; `get` drops it, and otherwise it
 * stays until it is set again or pushed out, so the bound holds whatever the clock does.
 */

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
  /** Least recently used first. */
  private readonly entries = new Map<K, Entry<V>>();
  private readonly now: () => number;

  constructor(private readonly options: ExpiringCacheOptions) {
    this.now = options.now ?? Date.now;
  }

  /** The value, if it is there and has not expired; it becomes the most recently used. */
  get(key: K): V | undefined {
    const entry = this.live(key);
    // Moved to the end when live; dropped when expired.
    this.entries.delete(key);
    if (entry === undefined) return undefined;
    this.entries.set(key, entry);
    return entry.value;
  }

  /** The value, if it is there and has not expired, leaving its place in the order of use as it is. */
  peek(key: K): V | undefined {
    return this.live(key)?.value;
  }

  /** Whether an entry is there and has not expired, leaving its place as it is. */
  has(key: K): boolean {
    return this.live(key) !== undefined;
  }

  clear(): void {
    this.entries.clear();
  }

  /** Keeps `value` for `ttlMs` (the cache's own unless given); nothing is kept for a ttl of 0 or less. */
  set(key: K, value: V, ttlMs: number | undefined = this.options.ttlMs): void {
    if (ttlMs !== undefined && ttlMs <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: ttlMs === undefined ? Infinity : this.now() + ttlMs });
    if (this.entries.size > this.options.max) this.entries.delete(this.entries.keys().next().value!);
  }

  /** Replaces the value of an entry that has not expired, which keeps its expiry and its place; otherwise nothing. */
  replace(key: K, value: V): void {
    const entry = this.live(key);
    if (entry !== undefined) this.entries.set(key, { value, expiresAt: entry.expiresAt });
  }

  /** The entry if it is there and has not expired (not `<=`: an expiry that is no number has passed), its place left as it is. */
  private live(key: K): Entry<V> | undefined {
    const entry = this.entries.get(key);
    return entry !== undefined && entry.expiresAt > this.now() ? entry : undefined;
  }
}
