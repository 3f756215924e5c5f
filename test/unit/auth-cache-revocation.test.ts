/**
 * The auth cache's promises to an operator, beyond hit/miss/expiry/size (cached-access-store.test.ts):
 * a revoked key stops working within AUTH_CACHE_SECONDS, unknown Organizations are remembered
 * briefly too, the negative lifetime never outlasts the positive one, and the size bound holds
 * for Organizations as for keys. A virtual clock; no timing.
 */
import { beforeEach, describe, expect, it } from '@jest/globals';
import { CachedAccessStore } from '../../functions/shared/store/cached-access-store';
import type { AccessLookup, AccessStore, OrganizationAccess } from '../../functions/shared/store/ports';

/** A store whose data the test changes under the cache, counting every read. */
function mutableStore() {
  const keys = new Map<string, string>();
  const organizations = new Map<string, OrganizationAccess>();
  const reads: [string | undefined, string | undefined][] = [];
  const store: AccessStore = {
    async lookup(keyHash, organizationId): Promise<AccessLookup> {
      reads.push([keyHash, organizationId]);
      const userId = keyHash === undefined ? undefined : keys.get(keyHash);
      const organization = organizationId === undefined ? undefined : organizations.get(organizationId);
      return { ...(userId && { key: { userId, policy: {} } }), ...(organization && { organization }) };
    },
    recordUse: async () => undefined,
  };
  return { store, keys, organizations, reads };
}

const organization = (id: string): OrganizationAccess => ({ organizationId: id, members: new Set(['u1']), senders: new Set(['example.com']), suppressions: 0 });

describe('CachedAccessStore for operators', () => {
  let clock = 0;
  const now = () => clock;
  const advance = (ms: number) => void (clock += ms);
  beforeEach(() => {
    clock = 50_000;
  });

  it('keeps accepting a revoked key until AUTH_CACHE_SECONDS have passed since it was read, then refuses it', async () => {
    const { store, keys } = mutableStore();
    keys.set('h1', 'u1');
    const cached = new CachedAccessStore(store, { ttlSeconds: 30, now });
    expect((await cached.lookup('h1', undefined)).key).toEqual({ userId: 'u1', policy: {} });

    keys.delete('h1'); // `admin key revoke`
    advance(29_999);
    expect((await cached.lookup('h1', undefined)).key).toEqual({ userId: 'u1', policy: {} });
    advance(2);
    expect((await cached.lookup('h1', undefined)).key).toBeUndefined();
  });

  it('sees a rotated key at once (a new key is a new cache entry) while the old one lives out its entry', async () => {
    const { store, keys } = mutableStore();
    keys.set('old', 'u1');
    const cached = new CachedAccessStore(store, { ttlSeconds: 30, now });
    await cached.lookup('old', undefined);
    keys.delete('old');
    keys.set('new', 'u1'); // `admin key rotate`
    advance(1_000);
    expect((await cached.lookup('new', undefined)).key).toEqual({ userId: 'u1', policy: {} });
    expect((await cached.lookup('old', undefined)).key).toEqual({ userId: 'u1', policy: {} });
    advance(30_000);
    expect((await cached.lookup('old', undefined)).key).toBeUndefined();
  });

  it('remembers an unknown Organization exactly as long as a known one, so neither floods nor timing tell them apart', async () => {
    const { store, keys, organizations, reads } = mutableStore();
    keys.set('h1', 'u1');
    const cached = new CachedAccessStore(store, { ttlSeconds: 30, now });
    for (let i = 0; i < 10; i++) expect((await cached.lookup('h1', 'nowhere')).organization).toBeUndefined();
    expect(reads).toEqual([['h1', 'nowhere']]);

    organizations.set('nowhere', organization('nowhere')); // `admin org create --id …`
    advance(29_000);
    expect((await cached.lookup('h1', 'nowhere')).organization).toBeUndefined();
    advance(1_001);
    expect((await cached.lookup('h1', 'nowhere')).organization).toEqual(organization('nowhere'));
    // Key and Organization were remembered for the same 30 s, so both are read again together.
    expect(reads).toEqual([['h1', 'nowhere'], ['h1', 'nowhere']]);
  });

  it('never remembers a miss for longer than a hit', async () => {
    const { store, reads } = mutableStore();
    const cached = new CachedAccessStore(store, { ttlSeconds: 2, now });
    await cached.lookup('unknown', undefined);
    advance(2_001);
    await cached.lookup('unknown', undefined);
    expect(reads).toHaveLength(2);
  });

  it('keeps at most maxEntries Organizations, evicting the least recently used', async () => {
    const { store, organizations, reads } = mutableStore();
    for (let i = 0; i < 4; i++) organizations.set(`o${i}`, organization(`o${i}`));
    const cached = new CachedAccessStore(store, { ttlSeconds: 30, maxEntries: 2, now });
    await cached.lookup(undefined, 'o0');
    await cached.lookup(undefined, 'o1');
    await cached.lookup(undefined, 'o0'); // o1 is now the least recently used
    await cached.lookup(undefined, 'o2');
    reads.length = 0;
    await cached.lookup(undefined, 'o0');
    await cached.lookup(undefined, 'o2');
    expect(reads).toEqual([]);
    await cached.lookup(undefined, 'o1');
    expect(reads).toEqual([[undefined, 'o1']]);
  });

  it('bounds unknown keys in a cache of their own: they cannot grow it without limit, nor push a real key out', async () => {
    const { store, keys, reads } = mutableStore();
    keys.set('good', 'u1');
    const cached = new CachedAccessStore(store, { ttlSeconds: 30, maxEntries: 3, now });
    await cached.lookup('good', undefined);
    for (let i = 0; i < 50; i++) await cached.lookup(`bad${i}`, undefined);
    reads.length = 0;
    await cached.lookup('good', undefined);
    await cached.lookup('bad49', undefined);
    expect(reads).toEqual([]);
    await cached.lookup('bad0', undefined); // long evicted from the three-entry cache of unknown keys
    expect(reads).toEqual([['bad0', undefined]]);
  });
});
