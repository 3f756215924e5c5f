/**
 * The operator's view of scheduled messages (CONTRACT section 13 item 5): `schedule list --org O`
 * and `schedule cancel --org O --id S`, and what `key revoke` / `key rotate` do to the schedules
 * the old key made (functions/shared/schedules/key-schedules.ts). A schedule cancelled here is
 * `Cancelled` in the table at once; its `email.cancelled` is told at once too when the command
 * reaches the deployed stack's webhook queue and schedule group, and otherwise by its timer,
 * once, when it fires at the schedule's time (cancelling.ts).
 */
import type { Command } from 'commander';
import { isCanonicalUuid } from '../../functions/shared/domain/uuid';
import { cancelFor, retireKeySchedules } from '../../functions/shared/schedules/key-schedules';
import { formatSendAt } from '../../functions/shared/schedules/notices';
import { DynamoDbScheduleStore } from '../../functions/shared/schedules/schedule-store';
import { InvalidArgumentError, RecordConflictError, RecordNotFoundError } from '../../functions/shared/store/records';
import type { DynamoDbAdminStore } from './admin-store';
import type { AdminCancelling } from './cancelling';
import { noticeReport } from './cancelling';
import type { Leaf } from './command-frame';

/**
 * After `key revoke` or `key rotate`: the old key's pending schedules are cancelled, or with
 * `keepOn` (the new key's hash) moved to the new key. Returns how many of each.
 */
export async function retireSchedulesOf(store: DynamoDbAdminStore, cancelling: AdminCancelling, userId: string, oldHash: string, keepOn?: string): Promise<{ cancelled: number; kept: number }> {
  const user = await store.getUser(userId);
  const { cancelled, kept } = await retireKeySchedules(user, oldHash, keepOn, cancelling);
  return { cancelled: cancelled.length, kept: kept.length };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** An id option's value, lower-cased; one that is not a UUID is a usage error (exit 1), as for every id option. */
function uuidOf(value: string, what: string): string {
  const id = value.toLowerCase();
  if (!isCanonicalUuid(id)) throw new InvalidArgumentError(`"${value}" is not ${what} (a UUID)`);
  return id;
}

const organizationOf = (value: string) => uuidOf(value, 'an Organization id');

export function addScheduleCommands(program: Command, leaf: Leaf): void {
  const schedule = program.command('schedule').description("an Organization's scheduled messages not yet sent");
  leaf(schedule, 'list', 'list the scheduled messages waiting for their time, soonest first: id, SendAt (UTC), recipients, subject, the user who made them', async (store, o) => {
    const organizationId = organizationOf(o.org!);
    // An Organization that does not exist is exit 3, as everywhere in the CLI, not an empty list.
    await store.getOrganization(organizationId);
    const entries = await new DynamoDbScheduleStore(store.client, store.tableName).organizations.list(organizationId);
    const schedules = entries.map((entry) => ({
      scheduleId: entry.scheduleId,
      sendAt: formatSendAt(entry.sendAt),
      recipients: entry.recipients,
      subject: entry.subject,
      userId: entry.userId,
      ...(entry.test && { test: true }),
    }));
    const lines = schedules.map((s) => `\n  ${s.scheduleId}  ${s.sendAt}  to ${s.recipients.join(', ')}  "${s.subject}"${s.test ? '  (test mode)' : ''}`).join('');
    return { human: `Organization ${organizationId} has ${plural(schedules.length, 'scheduled message')} waiting${lines}`, json: { organizationId, schedules } };
  }).requiredOption('--org <uuid>', 'Organization id');

  leaf(schedule, 'cancel', 'cancel a scheduled message that has not been sent yet', async (store, o, admin) => {
    const organizationId = organizationOf(o.org!);
    const scheduleId = uuidOf(o.id!, 'a ScheduleId');
    const parts = admin.cancelling();
    const head = (await parts.schedules.heads([scheduleId])).get(scheduleId);
    const status = await cancelFor(head, organizationId, parts);
    if (status === 'Unknown') throw new RecordNotFoundError(`Organization ${organizationId} has no scheduled message ${o.id}`);
    if (status === 'AlreadySent') throw new RecordConflictError(`the time of scheduled message ${scheduleId} has come (it is ${head!.state === 'Scheduled' ? 'being sent' : head!.state.toLowerCase()}): it can no longer be cancelled`);
    const notice = noticeReport(1, parts, admin.local);
    return { human: `Scheduled message ${scheduleId} of Organization ${organizationId} is cancelled; it will not be sent${notice.human}`, json: { organizationId, scheduleId, status: 'Cancelled', ...notice.json } };
  })
    .requiredOption('--org <uuid>', 'Organization id')
    .requiredOption('--id <scheduleId>', 'the ScheduleId the send answer gave');
}
