/**
 * What the functions' build gives the DynamoDB client's endpoint cache (`@aws-sdk/endpoint-cache`)
 * in place of mnemonist's `LRUCache` (infra/aws/endpoint-cache-lru-build.ts): the methods that
 * cache calls, with mnemonist's meaning, on `ExpiringCache` with no expiry.
 *
 * mnemonist ships CommonJS only, and V8 parses a bundled CommonJS module twice at a cold start: its
 * `LRUCache` and the obliterator helpers it requires (7 KiB) cost the send function 0.4 to 0.6 ms
 * of every cold start (docs/performance.md, "Cold start"), for a cache that only endpoint discovery
 * uses, which this service never turns on. `test/unit/endpoint-cache-lru.test.ts` holds it to
 * mnemonist's answers, through the SDK's own `EndpointCache`.
 */
import { ExpiringCache } from './expiring-cache';

export default class LRUCache<K, V> {
  private readonly entries: ExpiringCache<K, V>;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity <= 0) throw new TypeError(`an LRUCache needs a capacity of 1 or more, got ${String(capacity)}`);
    this.entries = new ExpiringCache<K, V>({ max: capacity });
  }

  /** The value, which becomes the most recently used. */
  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  /** The value, leaving the order of use as it is. */
  peek(key: K): V | undefined {
    return this.entries.peek(key);
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  /** Keeps `value` as the most recently used, pushing out the least recently used when full. */
  set(key: K, value: V): this {
    this.entries.set(key, value);
    return this;
  }

  clear(): void {
    this.entries.clear();
  }
}
