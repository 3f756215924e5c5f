// Activity's scheduled messages: those of the user's Organizations still waiting for their
// time (GET /v1.2/me/schedules), soonest first, each with a Cancel button
// (DELETE /v1.2/me/schedules). Everything is put on the page as text.
import { api, cell, fillActionTable, markTest } from './page.js';

const STATUS_WORDS = {
  Cancelled: 'was cancelled; it will not be sent',
  AlreadySent: 'could not be cancelled: its time has come',
  Unknown: 'is no longer scheduled',
};

/** `nameOf`: an Organization's name from its id. */
export async function loadSchedules(nameOf) {
  const { Schedules: list } = await api('GET', '/v1.2/me/schedules');
  fillActionTable('scheduled', 'activity', list, (schedule) => ({
    cells: [cell(schedule.SendAt), cell(schedule.Recipients.join(', ')), markTest(cell(schedule.Subject), schedule.Test), cell(nameOf(schedule.OrganizationId))],
    button: {
      text: 'Cancel',
      label: `Cancel the message to ${schedule.Recipients.join(', ')} at ${schedule.SendAt} UTC`,
      confirm: `Cancel "${schedule.Subject}", scheduled for ${schedule.SendAt} UTC?\n\nIt will not be sent.`,
      run: async () => {
        const { Status } = await api('DELETE', '/v1.2/me/schedules', { organizationId: schedule.OrganizationId, scheduleId: schedule.ScheduleId });
        return `The message "${schedule.Subject}" ${STATUS_WORDS[Status] ?? Status}.`;
      },
    },
  }));
}
