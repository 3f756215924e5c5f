/**
 * Where the local OpenID provider keeps sessions, grants and codes: in memory, on purpose. A
 * restart of the local stack signs everyone out, which costs a developer one sign-in; nothing
 * else depends on it. (oidc-provider's own quick-start adapter does the same but warns on start.)
 */
import type { Adapter, AdapterPayload } from 'oidc-provider';

interface Entry {
  readonly payload: AdapterPayload;
  readonly expiresAt: number | undefined;
}

const stores = new Map<string, Map<string, Entry>>();
/** Grant id -> keys of everything issued under it, for revocation. */
const byGrant = new Map<string, Set<string>>();

export class MemoryAdapter implements Adapter {
  private readonly entries: Map<string, Entry>;

  constructor(private readonly name: string) {
    this.entries = stores.get(name) ?? new Map();
    stores.set(name, this.entries);
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
    this.entries.set(id, { payload, expiresAt: expiresIn ? Date.now() + expiresIn * 1_000 : undefined });
    if (payload.grantId) {
      const keys = byGrant.get(payload.grantId) ?? new Set();
      keys.add(`${this.name}:${id}`);
      byGrant.set(payload.grantId, keys);
    }
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const entry = this.entries.get(id);
    if (entry?.expiresAt !== undefined && entry.expiresAt <= Date.now()) {
      this.entries.delete(id);
      return undefined;
    }
    return entry?.payload;
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    for (const [id, entry] of this.entries) if (entry.payload.uid === uid) return this.find(id);
    return undefined;
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    for (const [id, entry] of this.entries) if (entry.payload.userCode === userCode) return this.find(id);
    return undefined;
  }

  async consume(id: string): Promise<void> {
    const entry = this.entries.get(id);
    if (entry) this.entries.set(id, { ...entry, payload: { ...entry.payload, consumed: Math.floor(Date.now() / 1_000) } });
  }

  async destroy(id: string): Promise<void> {
    this.entries.delete(id);
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    for (const key of byGrant.get(grantId) ?? []) {
      const at = key.indexOf(':');
      stores.get(key.slice(0, at))?.delete(key.slice(at + 1));
    }
    byGrant.delete(grantId);
  }
}
