/**
 * The signed-in user's Organizations as the settings page shows them: name and id, the limits
 * and default tracking the operator set (domain/org-limits.ts, mail/tracking.ts, read from the
 * Organization item the membership check reads anyway) and today's use of the daily quota (store/dynamodb-daily-usage.ts). Also the one
 * membership rule of every `/v1.2/me` endpoint that names an Organization: a member's only,
 * and an unknown Organization answers exactly as another's does (403).
 */
import type { OrganizationLimits } from '../shared/domain/org-limits';
import { utcDay } from '../shared/domain/org-limits';
import type { Pause } from '../shared/domain/reputation';
import type { Tracking } from '../shared/mail/tracking';
import { reputationView, summarise } from '../shared/domain/reputation';
import { isCanonicalUuid } from '../shared/domain/uuid';
import { OrganizationForbiddenProblem } from '../shared/http/problems';
import { InvalidParameterProblem } from './problems';
import type { DynamoDbReputationStore } from '../shared/store/dynamodb-reputation-store';
import type { DailyUsage } from '../shared/store/ports';
import { withStorageFaults } from '../shared/store/storage-errors';

export interface MemberOrganization {
  readonly id: string;
  readonly name: string;
  readonly limits: OrganizationLimits;
  /** Its default open and click tracking, for messages that do not give `Tracking` (`org tracking`). */
  readonly tracking: Tracking;
  readonly paused: Pause | undefined;
}

export interface OrganizationView {
  readonly OrganizationId: string;
  readonly Name: string;
  /** Recipients per second, recipients per UTC day (null: not set) and the fair-share weight. */
  readonly Limits: { readonly Rate: number | null; readonly Daily: number | null; readonly Weight: number };
  /** Recipients sent today (UTC), against `Limits.Daily`. */
  readonly SentToday: number;
  /** What a message that does not give `Tracking` is tracked for (CONTRACT section 17). */
  readonly Tracking: { readonly Opens: boolean; readonly Clicks: boolean };
  /** Its bounce and complaint rates over 7 days, and whether (since when, why) it is paused. */
  readonly Reputation: ReturnType<typeof reputationView>;
}

/**
 * The Organization of that id among the user's, or 403 (unknown or not a member: the same answer).
 * No id, or one that is not a UUID, is the request's own mistake: 400 naming `organizationId`.
 */
export function memberOrganization(member: readonly MemberOrganization[], organizationId: string | undefined): MemberOrganization {
  const id = organizationId?.trim().toLowerCase() ?? '';
  if (!id) throw new InvalidParameterProblem('organizationId', 'is required: the id of one of your Organizations');
  if (!isCanonicalUuid(id)) throw new InvalidParameterProblem('organizationId', 'must be an Organization id (a UUID)');
  const found = member.find((organization) => organization.id === id);
  if (!found) throw new OrganizationForbiddenProblem({ detail: 'The Organization does not exist or you are not a member of it.' });
  return found;
}

/** The Organizations a read-only list covers: the one `query.organizationId` names, else every one, in the user's order. */
export function listedOrganizations(member: readonly MemberOrganization[], query: Readonly<Record<string, string | undefined>>): readonly MemberOrganization[] {
  return query.organizationId?.trim() ? [memberOrganization(member, query.organizationId)] : member;
}

/**
 * Each listed Organization's list (`listedOrganizations`), read with `read`: what the read-only
 * lists of the settings API share.
 */
export async function perOrganization<T>(
  member: readonly MemberOrganization[],
  query: Readonly<Record<string, string | undefined>>,
  read: (organizationId: string) => Promise<T[]>,
): Promise<{ organization: MemberOrganization; items: T[] }[]> {
  const targets = listedOrganizations(member, query);
  const lists = await withStorageFaults(() => Promise.all(targets.map((organization) => read(organization.id))));
  return targets.map((organization, i) => ({ organization, items: lists[i]! }));
}

/** `now`: the clock the reputation window ends at. */
export async function organizationViews(
  member: readonly MemberOrganization[],
  usage: Pick<DailyUsage, 'used'>,
  reputations: Pick<DynamoDbReputationStore, 'readMany'>,
  now: number,
): Promise<OrganizationView[]> {
  const day = utcDay(now);
  const [sent, byId] = await withStorageFaults(() =>
    Promise.all([
      Promise.all(member.map((organization) => usage.used(organization.id, day))),
      member.length === 0 ? new Map<string, never>() : reputations.readMany(member.map(({ id }) => id), now),
    ]),
  );
  return member.map(({ id, name, limits, tracking, paused }, i) => ({
    OrganizationId: id,
    Name: name,
    Limits: { Rate: limits.rate ?? null, Daily: limits.daily ?? null, Weight: limits.weight },
    SentToday: sent[i]!,
    Tracking: { Opens: tracking.opens, Clicks: tracking.clicks },
    Reputation: reputationView(byId.get(id) ?? summarise(() => undefined, now), paused),
  }));
}
