/**
 * What the send logic needs from storage, and nothing more. DynamoDB implements it
 * (`DynamoDbAccessStore`); a cache decorates it (`CachedAccessStore`).
 */
import type { Pause } from '../domain/reputation';
import type { Pace } from '../domain/send-pace';

/** The user a key hash belongs to. */
export interface KeyRecord {
  readonly userId: string;
}

/** What the request path needs to know of an Organization. */
export interface OrganizationAccess {
  readonly organizationId: string;
  readonly members: ReadonlySet<string>;
  /** Lower-case domains (ASCII/Punycode) and exact addresses allowed as `From`. */
  readonly senders: ReadonlySet<string>;
  /**
   * At least as many as the Organization has suppressed addresses (0: none, and sending reads
   * nothing more). See dynamodb-suppression-store.ts for why it is an upper bound.
   */
  readonly suppressions: number;
  /** Set while the Organization is paused (CONTRACT section 11 item 3): it may not send. */
  readonly paused?: Pause | undefined;
}

export interface AccessLookup {
  /** Absent when no key has that hash (unknown, rotated out or revoked). */
  readonly key?: KeyRecord;
  /** Absent when no Organization has that id. */
  readonly organization?: OrganizationAccess;
}

export interface AccessStore {
  /** Fetches the key's record and the Organization's record together, in one round trip. */
  lookup(keyHash: string | undefined, organizationId: string | undefined): Promise<AccessLookup>;
}

/** A response as first sent, kept so a retry with the same Idempotency-Key gets it again. */
export interface StoredResponse {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export interface IdempotencyRecord {
  /** Partition key: the user and a hash of the client's Idempotency-Key. */
  readonly scope: string;
  /** Identifies this claim's checkpoints, so those of an expired earlier use are never read. */
  readonly claimId: string;
  /** SHA-256 of the canonical JSON body. */
  readonly fingerprint: string;
  readonly status: 'IN_PROGRESS' | 'COMPLETE';
  /** Epoch ms until which the claiming invocation may still be running. */
  readonly lockUntil: number;
  /** Epoch seconds; DynamoDB TTL removes the record (and reads treat it as gone) after this. */
  readonly expiresAt: number;
  readonly response?: StoredResponse;
}

/** What is known of one message of an idempotent request. */
export interface Checkpoint {
  readonly index: number;
  /** IN_FLIGHT: about to be (or being) handed to SES. DONE: its result is known. */
  readonly state: 'IN_FLIGHT' | 'DONE';
  readonly result?: unknown;
}

export interface IdempotencyStore {
  /** Creates the record unless a live one exists; false when it does. */
  create(record: IdempotencyRecord, nowSeconds: number): Promise<boolean>;
  get(scope: string): Promise<IdempotencyRecord | undefined>;
  /** Takes over an in-progress record whose lock has lapsed; false when someone else did. */
  takeOver(scope: string, expectedLockUntil: number, lockUntil: number): Promise<boolean>;
  checkpoints(scope: string, claimId: string): Promise<Checkpoint[]>;
  checkpoint(scope: string, claimId: string, checkpoint: Checkpoint, expiresAt: number): Promise<void>;
  complete(scope: string, claimId: string, response: StoredResponse): Promise<void>;
}

/** Recipients reserved from the account's send rate (see domain/send-pace.ts). */
export interface Reservation {
  /** The TAT the reservation starts from; with no units, the bucket's TAT (when it has room: `nextFreeAt`). */
  readonly start: number;
  /** How many of the units asked for were reserved (those that can all be sent by the time given). */
  readonly units: number;
}

/** The account's send-rate budget, shared by every request on every function instance. */
export interface SendBudget {
  /** Reserves up to `units` recipients, keeping only those that can be sent by `lastSendAt` (epoch ms). */
  reserve(units: number, pace: Pace, now: number, lastSendAt: number): Promise<Reservation>;
}

/** Which of these addresses an Organization has suppressed (CONTRACT section 10), lower-case. */
export interface SuppressionList {
  suppressed(organizationId: string, addresses: readonly string[]): Promise<ReadonlySet<string>>;
}
