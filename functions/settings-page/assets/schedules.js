// Activity's scheduled messages: those of the user's Organizations still waiting for their
// time (GET /v1.2/me/schedules), soonest first, each with a Cancel button
// (DELETE /v1.2/me/schedules). Everything is put on the page as text.
import { $, act, api, cell, say, show } from './page.js';

const STATUS_WORDS = {
  Cancelled: 'was cancelled; it will not be sent',
  AlreadySent: 'could not be cancelled: its time has come',
  Unknown: 'is no longer scheduled',
};

/** `nameOf`: an Organization's name from its id. */
export async function loadSchedules(nameOf) {
  const { Schedules: list } = await api('GET', '/v1.2/me/schedules');
  const rows = list.map((schedule) => {
    const row = document.createElement('tr');
    const action = document.createElement('td');
    const cancel = document.createElement('button');
    cancel.type = 'button';
    cancel.textContent = 'Cancel';
    cancel.setAttribute('aria-label', `Cancel the message to ${schedule.Recipients.join(', ')} at ${schedule.SendAt} UTC`);
    cancel.addEventListener('click', () => {
      const sure = window.confirm(`Cancel "${schedule.Subject}", scheduled for ${schedule.SendAt} UTC?\n\nIt will not be sent.`);
      if (!sure) return;
      act(cancel, async () => {
        const { Status } = await api('DELETE', '/v1.2/me/schedules', { organizationId: schedule.OrganizationId, scheduleId: schedule.ScheduleId });
        row.remove();
        const any = $('scheduled-rows').children.length > 0;
        show('scheduled-table', any);
        show('scheduled-none', !any);
        $('activity').focus();
        say(`The message "${schedule.Subject}" ${STATUS_WORDS[Status] ?? Status}.`);
      });
    });
    action.append(cancel);
    row.append(cell(schedule.SendAt), cell(schedule.Recipients.join(', ')), cell(schedule.Subject), cell(nameOf(schedule.OrganizationId)), action);
    return row;
  });
  $('scheduled-rows').replaceChildren(...rows);
  show('scheduled-table', rows.length > 0);
  show('scheduled-none', rows.length === 0);
}
