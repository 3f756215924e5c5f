/**
 * A schedule dies with its key (CONTRACT section 13 item 5; security audit round 3, finding 4).
 * A leaked key could otherwise queue 30 days of mail that revoking it does not stop. Two walls:
 *
 * 1. When a key is revoked, or rotated without `--keep-schedules`, its pending schedules are
 *    cancelled at once (`retireKeySchedules`): `Cancelled`, `email.cancelled`, timer disarmed
 *    (where no webhook queue can be reached, the timer stays and tells `email.cancelled` later).
 *    With `--keep-schedules` they move to the new key instead.
 * 2. At its time a schedule is sent only while the key that made it is still its user's key
 *    (functions/scheduled/fire.ts); otherwise it is `Cancelled` then. This catches what (1)
 *    cannot see: a schedule made while the key was being revoked, a retirement interrupted
 *    half-way. It is also where a key that expires by the time the schedule fires is caught.
 *
 * `cancelSchedule` is the one way a waiting schedule is cancelled, for the cancel endpoint, the
 * admin command line and (1) alike.
 */
import type { ScheduleNotices } from './notices';
import { headEvent } from './notices';
import type { ScheduleHead, ScheduleStore } from './schedule-model';
import type { OrganizationSchedules, PendingEntry } from './organization-schedules';
import type { ScheduleTimer } from './timer';

export interface CancelScheduleDependencies {
  readonly schedules: Pick<ScheduleStore, 'heads' | 'cancel' | 'settleNotice'>;
  /** Absent where no timer can be reached (the admin command line locally, or without the stack's schedule group): the timer then fires. */
  readonly timer: Pick<ScheduleTimer, 'disarm'> | undefined;
  /**
   * Absent where no webhook queue can be reached (the admin command line locally, or without the
   * stack's webhook queue: infra/admin/cancelling.ts): the schedule is then marked as owing its `email.cancelled`, and its timer is left
   * armed to tell it when it fires (functions/scheduled/fire.ts).
   */
  readonly notices: ScheduleNotices | undefined;
  readonly now: () => number;
  readonly warn: (message: string, details: Record<string, unknown>) => void;
}

/**
 * Cancels a schedule still waiting: true when this call cancelled it (false: it was not waiting).
 *
 * It is cancelled owing its `email.cancelled`, whoever cancels: until the notice is on the webhook
 * queue, the schedule's own timer is its backstop (functions/scheduled/fire.ts tells an owed one,
 * once, when it fires). So a notice that cannot be queued now is told late, never lost; once it is
 * queued, the debt is settled and the timer deleted. (A timer firing in between tells it again,
 * under the same webhook id, which a receiver takes as the same event.)
 */
export async function cancelSchedule(head: ScheduleHead, deps: CancelScheduleDependencies): Promise<boolean> {
  const now = deps.now();
  if (!(await deps.schedules.cancel(head.scheduleId, head.organizationId, now, true))) return false;
  if (deps.notices === undefined) return true;
  try {
    await deps.notices.notify(headEvent(head, 'Cancelled', now));
  } catch (error) {
    deps.warn("could not queue a cancelled schedule's email.cancelled; its timer tells it at the schedule's time", { scheduleId: head.scheduleId, error });
    return true;
  }
  // Told: what is left is tidying. Should the debt not be settled, the armed timer settles it
  // (telling again under the same webhook id), so neither step fails a cancel that happened.
  const settled = await deps.schedules.settleNotice(head.scheduleId, now).then(
    () => true,
    (error: unknown) => {
      deps.warn("could not settle a cancelled schedule's told notice; its timer tells it again", { scheduleId: head.scheduleId, error });
      return false;
    },
  );
  if (!settled) return true;
  await deps.timer?.disarm(head.scheduleId).catch((error: unknown) => {
    deps.warn("could not delete a cancelled schedule's timer; it will fire and do nothing", { scheduleId: head.scheduleId, error });
  });
  return true;
}

export type CancelStatus = 'Cancelled' | 'AlreadySent' | 'Unknown';

/**
 * What a request to cancel `head` in `organizationId` gets (the cancel endpoint, the settings
 * page): `Unknown` for no schedule of that Organization (another Organization's reads the same),
 * `Cancelled` (also when it already was), or `AlreadySent` when its time came first.
 */
export async function cancelFor(head: ScheduleHead | undefined, organizationId: string, deps: CancelScheduleDependencies): Promise<CancelStatus> {
  if (!head || head.organizationId !== organizationId.toLowerCase()) return 'Unknown';
  if (head.state === 'Cancelled') return 'Cancelled';
  if (head.state !== 'Scheduled') return 'AlreadySent';
  // Lost to its firing (claimed meanwhile): it is on its way.
  return (await cancelSchedule(head, deps)) ? 'Cancelled' : 'AlreadySent';
}

export interface KeyHolder {
  readonly id: string;
  /** The Organizations the user is a member of: where its schedules can be. */
  readonly organizations: readonly string[];
}

export interface RetireDependencies extends CancelScheduleDependencies {
  readonly organizations: Pick<OrganizationSchedules, 'list' | 'rekey'>;
}

/**
 * After the user's key `oldHash` was revoked or rotated: cancels the schedules it made, or, with
 * `keepOn` (the new key's hash), moves them to the new key. Returns the schedule ids of each.
 */
export async function retireKeySchedules(user: KeyHolder, oldHash: string, keepOn: string | undefined, deps: RetireDependencies): Promise<{ cancelled: string[]; kept: string[] }> {
  const cancelled: string[] = [];
  const kept: string[] = [];
  for (const organizationId of user.organizations) {
    const made = (await deps.organizations.list(organizationId)).filter((entry: PendingEntry) => entry.userId === user.id && entry.keyHash === oldHash);
    if (made.length === 0) continue;
    if (keepOn !== undefined) {
      for (const entry of made) if (await deps.organizations.rekey(organizationId, entry.scheduleId, oldHash, keepOn)) kept.push(entry.scheduleId);
      continue;
    }
    const heads = await deps.schedules.heads(made.map((entry) => entry.scheduleId));
    for (const head of heads.values()) if (await cancelSchedule(head, deps)) cancelled.push(head.scheduleId);
  }
  return { cancelled, kept };
}
