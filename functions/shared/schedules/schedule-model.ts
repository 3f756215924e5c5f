/**
 * What a scheduled message is (CONTRACT section 13): its states, its head record, and the store
 * port the send, scheduled-send, cancel and status functions use. `schedule-store.ts` explains
 * the state machine and implements the port on DynamoDB.
 */
import type { FailureCode } from '../mail/ports';
import type { ValidMessage } from '../mail/valid-message';
import type { TemplateReference } from '../templates/template-rules';

export const SCHEDULE_STATES = ['Scheduled', 'Claimed', 'InFlight', 'Sent', 'Expired', 'Failed', 'Cancelled'] as const;
export type ScheduleState = (typeof SCHEDULE_STATES)[number];
/** States a schedule never leaves. */
export const FINAL_STATES: ReadonlySet<ScheduleState> = new Set(['Sent', 'Expired', 'Failed', 'Cancelled']);

export interface ScheduleError {
  readonly Code: FailureCode;
  readonly Message: string;
  readonly Retryable: boolean;
}

export interface ScheduleHead {
  readonly scheduleId: string;
  readonly organizationId: string;
  /** The user who scheduled it: still a member of the Organization when it is sent, or it is not. */
  readonly userId: string;
  readonly state: ScheduleState;
  /** Epoch ms of `SendAt`. */
  readonly sendAt: number;
  /** Epoch ms of the next attempt: `sendAt`, later when throttling made it wait. */
  readonly dueAt: number;
  readonly attempts: number;
  readonly claimId?: string;
  /** Epoch ms until which a claim holds. */
  readonly leaseUntil?: number;
  /** The SES message id, once sent. */
  readonly messageId?: string;
  readonly error?: ScheduleError;
  /**
   * Recipients left out at its time because the Organization's suppression list held them
   * (CONTRACT section 10 item 3: the result names them), whether it was then sent or not.
   */
  readonly suppressed?: readonly string[];
  /** ISO time of the last change. */
  readonly updatedAt: string;
  /** The client's message tags (CONTRACT section 12), told with every status and webhook of the schedule. */
  readonly tags?: Readonly<Record<string, string>>;
  /**
   * The hash of the API key that made it (CONTRACT section 13 item 5): a schedule dies with its
   * key. At its time the key must still be its user's current key, or it is `Cancelled`. Absent on
   * schedules made before the rule (they answer to membership alone).
   */
  readonly keyHash?: string;
  /** Scheduled with a test-mode key: at its time it goes through test mode too, never to Amazon SES. */
  readonly test?: true;
  /** The template version it was rendered from (CONTRACT section 14), told in every state, not only once sent. */
  readonly template?: TemplateReference;
  /**
   * Cancelled where no webhook queue could be reached (the admin command line locally, or without
   * the stack's webhook queue): its `email.cancelled` is still owed, and its timer, when it fires, tells it once.
   */
  readonly noticeOwed?: true;
}

/** A schedule as the send path makes it: the head's identity and time, with the message itself. */
export interface NewSchedule extends Pick<ScheduleHead, 'scheduleId' | 'organizationId' | 'userId' | 'sendAt' | 'keyHash' | 'test'> {
  /** How many schedules the Organization may hold pending (CONTRACT section 11 item 7). */
  readonly pendingLimit: number;
  readonly message: ValidMessage;
  /** Epoch seconds: DynamoDB TTL removes the schedule, its parts and its outcome after this. */
  readonly expiresAt: number;
  readonly now: number;
}

export type Finish = (
  | { readonly state: 'Sent'; readonly messageId: string }
  | { readonly state: 'Expired' }
  /** Its key was revoked or rotated away before its time. */
  | { readonly state: 'Cancelled' }
  | { readonly state: 'Failed'; readonly error: ScheduleError }
) & { readonly suppressed?: readonly string[] | undefined };

export interface ScheduleStore {
  /**
   * Writes the schedule; 'exists' when a schedule with its id is already there (a retried
   * request); 'full' when the Organization already holds `pendingLimit` pending schedules.
   */
  create(schedule: NewSchedule): Promise<'created' | 'exists' | 'full'>;
  /** Removes a schedule that could not be armed (its timer failed), parts and all. */
  remove(scheduleId: string): Promise<void>;
  /** The head and, unless it is final, the message, read consistently; undefined when there is no such schedule. */
  load(scheduleId: string): Promise<{ readonly head: ScheduleHead; readonly message: ValidMessage | undefined } | undefined>;
  /** Heads only (no body), by id; ids without a schedule are absent. */
  heads(scheduleIds: readonly string[]): Promise<Map<string, ScheduleHead>>;
  /** Scheduled (or Claimed with a lapsed lease) → Claimed under `claimId`; false when it was not. */
  claim(scheduleId: string, claimId: string, leaseUntil: number, now: number): Promise<boolean>;
  /** Claimed → InFlight, just before the message is handed to SES; throws when the claim was lost. */
  inFlight(scheduleId: string, claimId: string, now: number): Promise<void>;
  finish(scheduleId: string, claimId: string | undefined, outcome: Finish, now: number): Promise<boolean>;
  /** Claimed/InFlight (not handed to SES after all) → Scheduled again, due at `dueAt`. */
  /**
   * Claimed (or, with `fromInFlight`, InFlight: its send ended and was certainly not made) →
   * Scheduled, due at `dueAt`. After a fault the outcome of an InFlight send is not known, so a
   * fault's retry passes `fromInFlight: false` and such a schedule ends OutcomeUnknown instead.
   */
  retry(scheduleId: string, claimId: string, dueAt: number, now: number, fromInFlight?: boolean): Promise<boolean>;
  /** Scheduled → Cancelled, for the schedule's own Organization only; `noticeOwed`: its webhook is told later, by its timer. */
  cancel(scheduleId: string, organizationId: string, now: number, noticeOwed?: boolean): Promise<boolean>;
  /** Takes the owed `email.cancelled` of a Cancelled schedule: true for exactly one caller, who then tells it. */
  settleNotice(scheduleId: string, now: number): Promise<boolean>;
  /** Puts a taken notice back (its telling failed): the next wake-up tells it. */
  oweNotice(scheduleId: string, now: number): Promise<boolean>;
  /** Every schedule not yet final, with when it is due (the local stack re-arms them on start). */
  pending(): Promise<{ readonly scheduleId: string; readonly dueAt: number }[]>;
}

/** A schedule is not as this firing expected: its claim was taken over, or its body is incomplete. */
export class ScheduleStateError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ScheduleStateError';
  }
}
