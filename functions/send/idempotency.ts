/**
 * Idempotency (CONTRACT section 6): a retry with the same `Idempotency-Key`, user and body
 * within 24 hours gets the first response again and sends nothing again, even when the first
 * attempt died part-way through its messages.
 *
 * Every message is checkpointed: IN_FLIGHT just before it is handed to SES, DONE with its result
 * after. A retry of a request whose invocation died (its lock has lapsed) takes the record over
 * and resumes: DONE messages are reported from their checkpoint, IN_FLIGHT ones as
 * `OutcomeUnknown` (SES may have them; sending again could duplicate), and only untouched
 * messages are sent.
 */
import { createHash, randomUUID } from 'node:crypto';
import canonicalize from 'canonicalize';
import { IdempotencyInProgressProblem, IdempotencyKeyReusedProblem } from '../shared/http/problems';
import type { IdempotencyRecord, IdempotencyStore, StoredResponse } from '../shared/store/ports';
import { itemKey } from '../shared/store/table';
import type { MessageResult } from './sending';
import { failed } from './sending';
import type { SendRequest } from './validation';

export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * Where a key's record lives: per user and per mode. A test key's Idempotency-Keys are its own, as
 * test and live data are apart everywhere else: the same key sent live after a test request is a
 * new request, which sends, not a replay of the test answer (which sent nothing real). The mode's
 * mark ends in a line feed, which no Idempotency-Key can hold (KEY_SHAPE), so no live key's text
 * can spell a test key's.
 */
const scopeOf = (start: Pick<IdempotentStart, 'userId' | 'key' | 'test'>) => itemKey.idempotencyScope(start.userId, sha256(start.test ? `test\n${start.key}` : start.key));

/**
 * Same request means the same validated, normalised request: key order and white space do not
 * matter, and neither do `organizationId` vs `OrganizationId`, the case of the UUID, or an
 * optional field given as null. What is compared is what would be sent.
 */
export function fingerprintOf(request: SendRequest): string {
  return sha256(canonicalize({ organizationId: request.organizationId, messages: request.messages }) ?? 'null');
}

export interface IdempotentStart {
  readonly store: IdempotencyStore;
  readonly userId: string;
  readonly key: string;
  /** Sent with a test-mode key. */
  readonly test?: boolean;
  readonly request: SendRequest;
  readonly now: number;
  /** Epoch ms after which this invocation can no longer be running. */
  readonly lockUntil: number;
}

export type Began =
  | { readonly kind: 'replay'; readonly response: StoredResponse }
  | { readonly kind: 'run'; readonly session: IdempotentSession; readonly known: ReadonlyMap<number, MessageResult> };

/** The checkpoints of one claimed request. Checkpoint writes that fail are the caller's to handle. */
export class IdempotentSession {
  constructor(
    private readonly store: IdempotencyStore,
    private readonly record: IdempotencyRecord,
  ) {}

  /** Stable across a takeover of the same claim, and unique to it: scheduling derives its ids from it. */
  get claimId(): string {
    return this.record.claimId;
  }

  /** When the first attempt of this request began (epoch ms, to the second below): a resumed retry decides by it what was scheduled. */
  get startedAt(): number {
    return (this.record.expiresAt - IDEMPOTENCY_TTL_SECONDS) * 1_000;
  }

  inFlight(index: number): Promise<void> {
    return this.store.checkpoint(this.record.scope, this.record.claimId, { index, state: 'IN_FLIGHT' }, this.record.expiresAt);
  }

  done(result: MessageResult): Promise<void> {
    return this.store.checkpoint(this.record.scope, this.record.claimId, { index: result.Index, state: 'DONE', result }, this.record.expiresAt);
  }

  complete(response: StoredResponse): Promise<void> {
    return this.store.complete(this.record.scope, this.record.claimId, response);
  }
}

async function resumeResults(store: IdempotencyStore, record: IdempotencyRecord): Promise<Map<number, MessageResult>> {
  const known = new Map<number, MessageResult>();
  for (const checkpoint of await store.checkpoints(record.scope, record.claimId)) {
    known.set(checkpoint.index, checkpoint.state === 'DONE' ? (checkpoint.result as MessageResult) : failed(checkpoint.index, 'OutcomeUnknown'));
  }
  return known;
}

/**
 * The first response to this request, if it completed: what a retry gets even when the request
 * could not be accepted now (its Organization paused since, a sender removed, a template deleted or
 * changed). Claims nothing.
 */
export async function completedResponse(start: Pick<IdempotentStart, 'store' | 'userId' | 'key' | 'test' | 'request' | 'now'>): Promise<StoredResponse | undefined> {
  const existing = await start.store.get(scopeOf(start));
  const live = existing && existing.expiresAt >= Math.floor(start.now / 1000);
  return live && existing.status === 'COMPLETE' && existing.fingerprint === fingerprintOf(start.request) ? existing.response : undefined;
}

/** Claims the key, or says what a retry gets instead: a replay, a 409 or a 422. */
export async function beginIdempotent(start: IdempotentStart): Promise<Began> {
  const { store, now, lockUntil } = start;
  const scope = scopeOf(start);
  const fingerprint = fingerprintOf(start.request);
  const nowSeconds = Math.floor(now / 1000);

  const fresh: IdempotencyRecord = {
    scope,
    claimId: randomUUID(),
    fingerprint,
    status: 'IN_PROGRESS',
    lockUntil,
    expiresAt: nowSeconds + IDEMPOTENCY_TTL_SECONDS,
  };
  if (await store.create(fresh, nowSeconds)) return { kind: 'run', session: new IdempotentSession(store, fresh), known: new Map() };

  const existing = await store.get(scope);
  // Gone between the two calls (TTL): the caller may simply retry.
  if (!existing || existing.expiresAt < nowSeconds) throw new IdempotencyInProgressProblem();
  if (existing.fingerprint !== fingerprint) throw new IdempotencyKeyReusedProblem();
  if (existing.status === 'COMPLETE' && existing.response) return { kind: 'replay', response: existing.response };
  if (existing.lockUntil > now) throw new IdempotencyInProgressProblem();

  // The first invocation died before finishing: take over, once, and resume from its checkpoints.
  if (!(await store.takeOver(scope, existing.lockUntil, lockUntil))) throw new IdempotencyInProgressProblem();
  const record = { ...existing, lockUntil };
  return { kind: 'run', session: new IdempotentSession(store, record), known: await resumeResults(store, record) };
}
