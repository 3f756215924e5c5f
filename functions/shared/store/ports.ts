/**
 * What the send logic needs from storage, and nothing more. DynamoDB implements it
 * (`DynamoDbAccessStore`); a cache decorates it (`CachedAccessStore`).
 */

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
