/**
 * Per-item write counting for `npm run bench -- --scale`: the counting proxy in front of dynalite
 * hands every DynamoDB JSON request here; each write names its item (pk and sk) and, for a put,
 * the whole item, whose DynamoDB size is estimated as DynamoDB bills it (attribute names plus values).
 */

type AttributeValue = Record<string, unknown>;
type Item = Record<string, AttributeValue>;

export interface ItemWrites {
  /** Writes per item, keyed `<pk> <sk>`. */
  readonly writes: Record<string, number>;
  /** The largest item a put wrote whole, and its size in bytes. */
  readonly largestPut: { readonly key: string; readonly bytes: number } | undefined;
}

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems', 'BatchWriteItem']);

const utf8 = (s: unknown) => Buffer.byteLength(String(s), 'utf8');

/** An item's size as DynamoDB counts it: names and values in bytes, numbers about one byte per two digits. */
export function itemSize(item: Item): number {
  return Object.entries(item).reduce((sum, [name, value]) => sum + utf8(name) + valueSize(value), 0);
}

function valueSize(value: AttributeValue): number {
  const [type, v] = Object.entries(value)[0] ?? ['NULL', true];
  switch (type) {
    case 'S':
      return utf8(v);
    case 'N':
      return Math.ceil(String(v).replace(/^-|\.|^0+/g, '').length / 2) + 1;
    case 'B':
      // Base64 on the wire; bytes once an SDK client has read it back.
      return v instanceof Uint8Array ? v.length : Buffer.from(String(v), 'base64').length;
    case 'SS':
      return (v as string[]).reduce((sum, s) => sum + utf8(s), 0);
    case 'NS':
      return (v as string[]).reduce((sum, n) => sum + valueSize({ N: n }), 0);
    case 'BS':
      return (v as unknown[]).reduce((sum: number, b) => sum + valueSize({ B: b }), 0);
    case 'M':
      return 3 + itemSize(v as Item);
    case 'L':
      return 3 + (v as AttributeValue[]).reduce((sum, e) => sum + 1 + valueSize(e), 0);
    default:
      return 1;
  }
}

export const keyOf = (item: Item | undefined) => `${String(item?.pk?.S ?? '?')} ${String(item?.sk?.S ?? '?')}`;

export class ItemWriteCounter {
  private writes = new Map<string, number>();
  private largest: { key: string; bytes: number } | undefined;

  /** One request crossing the proxy: `operation` from X-Amz-Target, `body` its JSON. */
  record(operation: string, body: Buffer): void {
    if (!WRITES.has(operation)) return;
    let request: Record<string, any>;
    try {
      request = JSON.parse(body.toString('utf8')) as Record<string, any>;
    } catch {
      return;
    }
    if (operation === 'PutItem') this.put(request.Item);
    else if (operation === 'UpdateItem' || operation === 'DeleteItem') this.count(request.Key);
    else if (operation === 'TransactWriteItems') {
      for (const entry of (request.TransactItems ?? []) as Record<string, any>[]) {
        if (entry.Put) this.put(entry.Put.Item);
        if (entry.Update) this.count(entry.Update.Key);
        if (entry.Delete) this.count(entry.Delete.Key);
      }
    } else {
      for (const requests of Object.values((request.RequestItems ?? {}) as Record<string, Record<string, any>[]>)) {
        for (const r of requests) {
          if (r.PutRequest) this.put(r.PutRequest.Item);
          if (r.DeleteRequest) this.count(r.DeleteRequest.Key);
        }
      }
    }
  }

  snapshot(): ItemWrites {
    return { writes: Object.fromEntries(this.writes), largestPut: this.largest };
  }

  reset(): void {
    this.writes.clear();
    this.largest = undefined;
  }

  private put(item: Item | undefined): void {
    const key = this.count(item);
    if (!item) return;
    const bytes = itemSize(item);
    if (!this.largest || bytes > this.largest.bytes) this.largest = { key, bytes };
  }

  private count(key: Item | undefined): string {
    const name = keyOf(key);
    this.writes.set(name, (this.writes.get(name) ?? 0) + 1);
    return name;
  }
}
