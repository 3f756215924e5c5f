import { beforeEach, describe, expect, it } from '@jest/globals';
import { CachedAccessStore } from '../../functions/shared/store/cached-access-store';
import type { AccessLookup, AccessStore } from '../../functions/shared/store/ports';

const org = { organizationId: 'o1', members: new Set(['u1']), senders: new Set(['example.com']), suppressions: 0 };

function countingStore(data: { keys: Record<string, string>; orgs: Record<string, typeof org> }) {
  const calls: [string | undefined, string | undefined][] = [];
  const store: AccessStore = {
    async lookup(keyHash, organizationId): Promise<AccessLookup> {
      calls.push([keyHash, organizationId]);
      const userId = keyHash ? data.keys[keyHash] : undefined;
      const organization = organizationId ? data.orgs[organizationId] : undefined;
      return { ...(userId && { key: { userId, policy: {} } }), ...(organization && { organization }) };
    },
    recordUse: async () => undefined,
  };
  return { store, calls };
}

describe('CachedAccessStore', () => {
  let clock = 0;
  const now = () => clock;
  const advance = (ms: number) => void (clock += ms);
  beforeEach(() => {
    clock = 1_000;
  });

  it('reads key and Organization together on a miss, and not at all on a hit', async () => {
    const { store, calls } = countingStore({ keys: { h1: 'u1' }, orgs: { o1: org } });
    const cached = new CachedAccessStore(store, { ttlSeconds: 30, now });
    const first = await cached.lookup('h1', 'o1');
    const second = await cached.lookup('h1', 'o1');
    expect(calls).toEqual([['h1', 'o1']]);
    expect(second).toEqual(first);
    expect(second).toEqual({ key: { userId: 'u1', policy: {} }, organization: org });
  });

  it('fetches only what is missing', async () => {
    const { store, calls } = countingStore({ keys: { h1: 'u1' }, orgs: { o1: org, o2: { ...org, organizationId: 'o2' } } });
    const cached = new CachedAccessStore(store, { ttlSeconds: 30, now });
    await cached.lookup('h1', 'o1');
    await cached.lookup('h1', 'o2');
    expect(calls).toEqual([['h1', 'o1'], [undefined, 'o2']]);
  });

  it('reads again once the entry has expired', async () => {
    const { store, calls } = countingStore({ keys: { h1: 'u1' }, orgs: { o1: org } });
    const cached = new CachedAccessStore(store, { ttlSeconds: 30, now });
    await cached.lookup('h1', 'o1');
    advance(29_000);
    await cached.lookup('h1', 'o1');
    expect(calls).toHaveLength(1);
    advance(2_000);
    await cached.lookup('h1', 'o1');
    expect(calls).toHaveLength(2);
  });

  it('recording a use keeps the key\'s expiry: a revoked key is read again AUTH_CACHE_SECONDS after it was, however often it is used', async () => {
    const { store, calls } = countingStore({ keys: { h1: 'u1' }, orgs: { o1: org } });
    const cached = new CachedAccessStore(store, { ttlSeconds: 30, now });
    await cached.lookup('h1', undefined);
    advance(29_000);
    await cached.recordUse('h1', '2026-11-27T08');
    expect((await cached.lookup('h1', undefined)).key).toEqual({ userId: 'u1', policy: {}, lastUsedAt: '2026-11-27T08' });
    advance(1_000);
    await cached.lookup('h1', undefined);
    expect(calls).toEqual([['h1', undefined], ['h1', undefined]]);
  });

  it('remembers an unknown key for the same lifetime, so repeated bad keys do not each cost a read', async () => {
    const { store, calls } = countingStore({ keys: {}, orgs: {} });
    const cached = new CachedAccessStore(store, { ttlSeconds: 30, now });
    for (let i = 0; i < 10; i++) expect(await cached.lookup('unknown', undefined)).toEqual({});
    expect(calls).toHaveLength(1);
    advance(29_000);
    await cached.lookup('unknown', undefined);
    expect(calls).toHaveLength(1);
    advance(1_001);
    await cached.lookup('unknown', undefined);
    expect(calls).toHaveLength(2);
  });

  it('keeps a real key cached through a flood of forged ones', async () => {
    const { store, calls } = countingStore({ keys: { real: 'u1' }, orgs: {} });
    const cached = new CachedAccessStore(store, { ttlSeconds: 30, maxEntries: 3, now });
    await cached.lookup('real', undefined);
    for (let i = 0; i < 50; i++) await cached.lookup(`forged-${i}`, undefined);
    calls.length = 0;
    expect((await cached.lookup('real', undefined)).key).toEqual({ userId: 'u1', policy: {} });
    expect(calls).toEqual([]);
  });

  it('keeps at most maxEntries keys, evicting the least recently used', async () => {
    const keys = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`h${i}`, `u${i}`]));
    const { store, calls } = countingStore({ keys, orgs: {} });
    const cached = new CachedAccessStore(store, { ttlSeconds: 30, maxEntries: 3, now });
    for (let i = 0; i < 5; i++) await cached.lookup(`h${i}`, undefined);
    calls.length = 0;
    await cached.lookup('h4', undefined);
    await cached.lookup('h0', undefined);
    expect(calls).toEqual([['h0', undefined]]);
  });
});
