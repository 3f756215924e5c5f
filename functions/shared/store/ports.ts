/**
 * What the send logic needs from storage, and nothing more. DynamoDB implements it
 * (`DynamoDbAccessStore`); a cache decorates it (`CachedAccessStore`).
 */
import type { Release, Round, RoundAsk } from '../domain/fair-share';
import type { KeyPolicy } from '../domain/key-policy';
import type { OrganizationLimits } from '../domain/org-limits';
import type { Pause } from '../domain/reputation';
import type { Tracking } from '../mail/tracking';
import type { Pace } from '../domain/send-pace';

/** The user a key hash belongs to, what the key may do, and the hour it was last used. */
export interface KeyRecord {
  readonly userId: string;
  readonly policy: KeyPolicy;
  /** The hour last recorded (ISO, minutes zero); absent: never. */
  readonly lastUsedAt?: string | undefined;
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
  /** What the operator set for it (rate, daily quota, weight); absent means none set. */
  readonly limits?: OrganizationLimits;
  /** Its default open and click tracking (CONTRACT section 17), for messages that do not say; absent: off. */
  readonly tracking?: Tracking;
  /** Set while the Organization is paused (CONTRACT section 11 item 3): it may not send. */
  readonly paused?: Pause | undefined;
}

export interface AccessLookup {
  /** Absent when no key has that hash (unknown, rotated out or revoked). */
  readonly key?: KeyRecord;
  /** Absent when no Organization has that id. */
  readonly organization?: OrganizationAccess;
}

export interface LookupOptions {
  /**
   * The user who must be a member of the Organization. A cache then answers only a yes from
   * memory; a no is read again, so a refusal costs the same round trip whatever the cache held.
   */
  readonly memberId?: string;
}

export interface AccessStore {
  /** Fetches the key's record and the Organization's record together, in one round trip. */
  lookup(keyHash: string | undefined, organizationId: string | undefined, options?: LookupOptions): Promise<AccessLookup>;
  /** Records that the key was used in this hour (ISO, minutes zero), unless a later or equal hour is recorded. */
  recordUse(keyHash: string, hour: string): Promise<void>;
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

/** The account's send-rate budget, shared by every request on every function instance (domain/fair-share.ts). */
export interface SendBudget {
  /** Books one round of turns for a request's messages still without one. */
  book(ask: RoundAsk): Promise<Round>;
  /** Gives back turns a round booked that ended unused. */
  release(release: Release, pace: Pace | undefined, now: number): Promise<void>;
}

/** Which of these addresses an Organization has suppressed (CONTRACT section 10), each as its mailbox (`mailboxOf`). */
export interface SuppressionList {
  suppressed(organizationId: string, addresses: readonly string[]): Promise<ReadonlySet<string>>;
}

/** Recipients an Organization sent (or has on their way) per UTC day, against its daily quota. */
export interface DailyUsage {
  /**
   * Takes as many of `units` (messages' recipients, in request order) as fit under `limit` on
   * `day`, all or nothing per message: the number of messages taken and the day's use after.
   */
  take(organizationId: string, day: string, units: readonly number[], limit: number): Promise<{ readonly taken: number; readonly used: number }>;
  /** Gives back units taken for messages that were not sent; the day's use after. */
  giveBack(organizationId: string, day: string, units: number): Promise<number>;
  /** The day's use so far. */
  used(organizationId: string, day: string): Promise<number>;
}
