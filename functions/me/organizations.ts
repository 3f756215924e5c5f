/**
 * The signed-in user's Organizations as the settings page shows them: name and id, the limits
 * the operator set (domain/org-limits.ts, read from the Organization item the membership check
 * reads anyway) and today's use of the daily quota (store/dynamodb-daily-usage.ts). Also the one
 * membership rule of every `/v1.2/me` endpoint that names an Organization: a member's only,
 * and an unknown Organization answers exactly as another's does (403).
 */
import type { OrganizationLimits } from '../shared/domain/org-limits';
import { utcDay } from '../shared/domain/org-limits';
import { OrganizationForbiddenProblem } from '../shared/http/problems';
import type { DailyUsage } from '../shared/store/ports';
import { withStorageFaults } from '../shared/store/storage-errors';

export interface MemberOrganization {
  readonly id: string;
  readonly name: string;
  readonly limits: OrganizationLimits;
}

export interface OrganizationView {
  readonly OrganizationId: string;
  readonly Name: string;
  /** Recipients per second, recipients per UTC day (null: not set) and the fair-share weight. */
  readonly Limits: { readonly Rate: number | null; readonly Daily: number | null; readonly Weight: number };
  /** Recipients sent today (UTC), against `Limits.Daily`. */
  readonly SentToday: number;
  // Reputation and a Paused flag join here once per-Organization reputation exists (issue 21).
}

/** The Organization of that id among the user's, or 403 (unknown or not a member: the same answer). */
export function memberOrganization(member: readonly MemberOrganization[], organizationId: string | undefined): MemberOrganization {
  const id = organizationId?.trim().toLowerCase();
  const found = member.find((organization) => organization.id === id);
  if (!found) throw new OrganizationForbiddenProblem();
  return found;
}

export async function organizationViews(member: readonly MemberOrganization[], usage: Pick<DailyUsage, 'used'>, now: number): Promise<OrganizationView[]> {
  const day = utcDay(now);
  const sent = await withStorageFaults(() => Promise.all(member.map((organization) => usage.used(organization.id, day))));
  return member.map(({ id, name, limits }, i) => ({
    OrganizationId: id,
    Name: name,
    Limits: { Rate: limits.rate ?? null, Daily: limits.daily ?? null, Weight: limits.weight },
    SentToday: sent[i]!,
  }));
}
