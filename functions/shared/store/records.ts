/** What the admin store and the key store read and write, and the errors they answer with. */
import type { KeyPolicy } from '../domain/key-policy';

/** The named record does not exist (or the relation to remove is not there). */
export class RecordNotFoundError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'RecordNotFoundError';
  }
}

/** The change would break a rule: a duplicate, or a key where there must be none. */
export class RecordConflictError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'RecordConflictError';
  }
}

/** An argument is not of the right form (a UUID, an email address, a domain). */
export class InvalidArgumentError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'InvalidArgumentError';
  }
}

export interface Organization {
  readonly id: string;
  readonly name: string;
  readonly members: readonly string[];
  readonly senders: readonly string[];
}

export interface User {
  readonly id: string;
  /** Absent for a service user, which has no e-mail and no sign-in. */
  readonly email?: string;
  /** A service user (`user create --service`): its name; absent for a person. */
  readonly serviceName?: string;
}

/** A user who is a person: one with an e-mail address, who can sign in to the settings page. */
export type Person = User & { readonly email: string };

export interface IssuedKey {
  readonly userId: string;
  /** The plain key: shown to the operator once, never stored. */
  readonly key: string;
  readonly createdAt: string;
  /** The hash of the key it replaced (rotate): the schedules that key made die with it, or move to this one. */
  readonly replacedKeyHash?: string;
}

export interface KeySummary {
  readonly userId: string;
  readonly masked: string;
  readonly createdAt: string;
  /** What the key may do; empty: everything. */
  readonly policy: KeyPolicy;
  readonly test: boolean;
  /** The hour it last authenticated a call (ISO, minutes zero); absent: never. */
  readonly lastUsedAt?: string;
}

/** A duplicate of a record that exists: `id` names the one already there (e.g. the user with that e-mail). */
export class ExistingRecordError extends RecordConflictError {
  constructor(
    message: string,
    readonly id: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'ExistingRecordError';
  }
}
