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
  /** Calls by operation and kind of item (`UpdateItem BUDGET#ses-send-rate#k`): where a request's DynamoDB time goes. */
  readonly calls: Record<string, CallTally>;
}

export interface CallTally {
  readonly calls: number;
  /** Answers that were not 200: for a conditional write, the races it lost. */
  readonly failed: number;
  /** Time the upstream (dynalite) took, summed over the calls. */
  readonly ms: number;
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

/** An item's kind: its partition key with ids and shard numbers left out. */
export const kindOfKey = (pk: string) => pk.replace(/[0-9a-f-]{16,}|[0-9A-Z]{26}/gi, '…').replace(/#\d+$/, '#k');

/** The kind of item one request names (a batch: its first key's, with how many keys). */
function kindOfRequest(request: Record<string, any>): string {
  if (request.Key) return kindOfKey(String(request.Key.pk?.S ?? '?'));
  if (request.Item) return kindOfKey(String(request.Item.pk?.S ?? '?'));
  if (request.IndexName) return `index ${String(request.IndexName)}`;
  const batch = Object.values((request.RequestItems ?? {}) as Record<string, { Keys?: Item[] }>)[0]?.Keys;
  if (batch) return `${kindOfKey(String(batch[0]?.pk?.S ?? '?'))} ×${batch.length}`;
  return '?';
}

export class ItemWriteCounter {
  private writes = new Map<string, number>();
  private largest: { key: string; bytes: number } | undefined;
  private calls = new Map<string, { calls: number; failed: number; ms: number }>();

  /** One answer crossing the proxy: counted by operation and kind of item, failed unless 200. */
  answered(operation: string, body: Buffer, status: number, ms: number): void {
    let kind = '?';
    try {
      kind = kindOfRequest(JSON.parse(body.toString('utf8')) as Record<string, any>);
    } catch {
      // not JSON: counted under '?'
    }
    const name = `${operation} ${kind}`;
    const tally = this.calls.get(name) ?? { calls: 0, failed: 0, ms: 0 };
    this.calls.set(name, { calls: tally.calls + 1, failed: tally.failed + (status === 200 ? 0 : 1), ms: tally.ms + ms });
  }

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
    return { writes: Object.fromEntries(this.writes), largestPut: this.largest, calls: Object.fromEntries(this.calls) };
  }

  reset(): void {
    this.writes.clear();
    this.largest = undefined;
    this.calls.clear();
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
