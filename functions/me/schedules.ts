/**
 * `GET` and `DELETE /v1.2/me/schedules`: the scheduled messages of the signed-in user's
 * Organizations still waiting for their time, and cancelling one (CONTRACT section 13 item 5), by
 * the same rules and the same store as the admin command line's `schedule list` and
 * `schedule cancel`. The settings page's Activity shows them above the sent messages, each with a
 * Cancel button.
 */
import { isCanonicalUuid } from '../shared/domain/uuid';
import type { CancelScheduleDependencies, CancelStatus } from '../shared/schedules/key-schedules';
import { cancelFor } from '../shared/schedules/key-schedules';
import { formatSendAt } from '../shared/schedules/notices';
import type { OrganizationSchedules } from '../shared/schedules/organization-schedules';
import { withStorageFaults } from '../shared/store/storage-errors';
import type { MemberOrganization } from './organizations';
import { memberOrganization, perOrganization } from './organizations';
import { InvalidParameterProblem } from './problems';

export interface ScheduleView {
  readonly OrganizationId: string;
  readonly ScheduleId: string;
  /** `YYYY-MM-DD HH:MM:SS`, UTC, as the client wrote `SendAt`. */
  readonly SendAt: string;
  /** The first few recipients. */
  readonly Recipients: readonly string[];
  readonly Subject: string;
  /** Scheduled with a test-mode key: it will go through test mode, never to Amazon SES. */
  readonly Test?: true;
}

type Query = Readonly<Record<string, string | undefined>>;

/** Every member Organization's waiting schedules, or the one named's; soonest first. */
export async function listSchedules(member: readonly MemberOrganization[], query: Query, store: Pick<OrganizationSchedules, 'list'>): Promise<{ Schedules: ScheduleView[] }> {
  const lists = await perOrganization(member, query, (organizationId) => store.list(organizationId));
  return {
    Schedules: lists
      .flatMap(({ items }) => items)
      .sort((a, b) => a.sendAt - b.sendAt || a.scheduleId.localeCompare(b.scheduleId))
      .map((entry) => ({ OrganizationId: entry.organizationId, ScheduleId: entry.scheduleId, SendAt: formatSendAt(entry.sendAt), Recipients: entry.recipients, Subject: entry.subject, ...(entry.test && { Test: true as const }) })),
  };
}

/**
 * Cancels one of a member Organization's schedules: `Cancelled` (also when it was already),
 * `AlreadySent` when its time came first, `Unknown` for an id no schedule of that Organization
 * has (another Organization's reads the same), as the cancel endpoint answers.
 */
export async function cancelScheduled(member: readonly MemberOrganization[], query: Query, deps: CancelScheduleDependencies): Promise<{ ScheduleId: string; Status: CancelStatus }> {
  const organization = memberOrganization(member, query.organizationId);
  const scheduleId = query.scheduleId?.trim().toLowerCase() ?? '';
  if (!isCanonicalUuid(scheduleId)) throw new InvalidParameterProblem('scheduleId', 'must be the ScheduleId the send answer gave (a UUID)');
  const head = (await withStorageFaults(() => deps.schedules.heads([scheduleId]))).get(scheduleId);
  return { ScheduleId: scheduleId, Status: await withStorageFaults(() => cancelFor(head, organization.id, deps)) };
}
