/**
 * The stand-in the functions' build gives the DynamoDB client's endpoint cache for mnemonist's
 * `LRUCache` (functions/shared/runtime/endpoint-cache-lru.ts) answers as mnemonist does: the same
 * random operations on both give the same answers, directly and through the SDK's own
 * `EndpointCache`, with a capacity small enough that entries are pushed out all the time.
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { EndpointCache } from '@aws-sdk/endpoint-cache';
import fc from 'fast-check';
import MnemonistLruCache from 'mnemonist/lru-cache';
import StandIn from '../../functions/shared/runtime/endpoint-cache-lru';

const RUNS = { seed: 3_200_032, numRuns: 500 };
const keys = fc.constantFrom('a', 'b', 'c', 'd', 'e');

type LruOp = { op: 'get' | 'peek' | 'has'; key: string } | { op: 'set'; key: string; value: number } | { op: 'clear' };
const lruOps = fc.array(
  fc.oneof(
    { arbitrary: fc.record({ op: fc.constantFrom('get' as const, 'peek' as const, 'has' as const), key: keys }), weight: 4 },
    { arbitrary: fc.record({ op: fc.constant('set' as const), key: keys, value: fc.integer() }), weight: 4 },
    { arbitrary: fc.record({ op: fc.constant('clear' as const) }), weight: 1 },
  ),
  // fast-check sizes arrays small by default (at most 10 here), too short to push entries out often.
  { minLength: 1, maxLength: 60, size: 'max' },
);

/** Each operation's answer, and which keys are left (peeked, which changes nothing). */
function runLru(cache: { get(k: string): unknown; peek(k: string): unknown; has(k: string): boolean; set(k: string, v: number): unknown; clear(): void }, ops: LruOp[]) {
  const answers = ops.map((o) => {
    switch (o.op) {
      case 'set':
        cache.set(o.key, o.value);
        return 'set';
      case 'clear':
        cache.clear();
        return 'clear';
      default:
        return cache[o.op](o.key);
    }
  });
  return { answers, left: ['a', 'b', 'c', 'd', 'e'].map((k) => cache.peek(k)) };
}

type EndpointOp = { op: 'get' | 'has' | 'delete' | 'getEndpoint'; key: string } | { op: 'set'; key: string; address: string; minutes: number } | { op: 'clear' };
const endpointOps = fc.array(
  fc.oneof(
    { arbitrary: fc.record({ op: fc.constantFrom('get' as const, 'has' as const, 'delete' as const, 'getEndpoint' as const), key: keys }), weight: 4 },
    // A cache period of 0 has expired as soon as it is set.
    { arbitrary: fc.record({ op: fc.constant('set' as const), key: keys, address: fc.constantFrom('x.example', 'y.example'), minutes: fc.constantFrom(0, 1, 5) }), weight: 4 },
    { arbitrary: fc.record({ op: fc.constant('clear' as const) }), weight: 1 },
  ),
  { minLength: 1, maxLength: 60, size: 'max' },
);

function runEndpointCache(cache: EndpointCache, ops: EndpointOp[]) {
  return ops.map((o) => {
    switch (o.op) {
      case 'set':
        cache.set(o.key, [{ Address: o.address, CachePeriodInMinutes: o.minutes }]);
        return 'set';
      case 'clear':
        cache.clear();
        return 'clear';
      case 'get':
        return cache.get(o.key)?.map((endpoint) => endpoint.Address);
      default:
        return cache[o.op](o.key);
    }
  });
}

const require = createRequire(import.meta.url);

describe("the endpoint cache's LRUCache stand-in", () => {
  it('is tested against the endpoint cache and the mnemonist the DynamoDB client itself resolves, not other copies', () => {
    // After an SDK update npm may nest a newer endpoint cache under the client; this test would then compare the wrong one.
    const from = (pkg: string, dependent: string) => require.resolve(pkg, { paths: [dirname(require.resolve(dependent))] });
    expect(from('@aws-sdk/endpoint-cache', '@aws-sdk/middleware-endpoint-discovery')).toBe(require.resolve('@aws-sdk/endpoint-cache'));
    expect(from('@aws-sdk/middleware-endpoint-discovery', '@aws-sdk/client-dynamodb')).toBe(require.resolve('@aws-sdk/middleware-endpoint-discovery'));
    expect(from('mnemonist/lru-cache', '@aws-sdk/endpoint-cache')).toBe(require.resolve('mnemonist/lru-cache'));
  });

  it('refuses the capacities mnemonist refuses', () => {
    for (const capacity of [0, -1, 2.5, Number.NaN, undefined]) {
      expect(() => new MnemonistLruCache(capacity as number)).toThrow();
      expect(() => new StandIn(capacity as number)).toThrow(/capacity/);
    }
  });

  it('answers every sequence of get, peek, has, set and clear as mnemonist does, pushing out the same entries', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), lruOps, (capacity, ops) => {
        expect(runLru(new StandIn<string, number>(capacity), ops)).toEqual(runLru(new MnemonistLruCache<string, number>(capacity), ops));
      }),
      RUNS,
    );
  });

  it("gives the SDK's EndpointCache the answers it gets from mnemonist", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), endpointOps, (capacity, ops) => {
        const withStandIn = new EndpointCache(capacity);
        // The field EndpointCache keeps its mnemonist LRUCache in, which the build fills with the stand-in.
        (withStandIn as unknown as { cache: unknown }).cache = new StandIn(capacity);
        expect(runEndpointCache(withStandIn, ops)).toEqual(runEndpointCache(new EndpointCache(capacity), ops));
      }),
      RUNS,
    );
  });
});
