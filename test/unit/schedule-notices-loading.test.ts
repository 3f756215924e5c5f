import { describe, expect, it } from '@jest/globals';
import { noticesOnFirstUse } from '../../functions/shared/schedules/dependencies';
import type { ScheduleEvent, ScheduleNotices } from '../../functions/shared/schedules/notices';

const event: ScheduleEvent = { status: 'Scheduled', organizationId: 'org-1', scheduleId: 'sch-1', sendAt: 2_000, at: 1_000 };

describe('noticesOnFirstUse', () => {
  it('never throws when the notices cannot be loaded: the notice is lost and said so, and the next one loads them again', async () => {
    const warnings: unknown[][] = [];
    const told: ScheduleEvent[] = [];
    let loads = 0;
    const notices = noticesOnFirstUse(
      async () => {
        if (++loads === 1) throw new Error('chunk could not be loaded');
        return { notify: async (e) => void told.push(e) } satisfies ScheduleNotices;
      },
      { warn: (...args: unknown[]) => void warnings.push(args) },
    );
    await expect(notices.notify(event)).resolves.toBeUndefined();
    expect(warnings).toEqual([['could not queue a schedule webhook', expect.objectContaining({ scheduleId: 'sch-1', status: 'Scheduled' })]]);
    expect(told).toEqual([]);
    await notices.notify({ ...event, scheduleId: 'sch-2' });
    await notices.notify({ ...event, scheduleId: 'sch-3' });
    expect(told.map((e) => e.scheduleId)).toEqual(['sch-2', 'sch-3']);
    expect(loads).toBe(2);
  });
});
