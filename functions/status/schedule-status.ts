/**
 * A scheduled message as the status endpoint tells it (CONTRACT section 13): `Scheduled` while it
 * waits (or is being sent), `Cancelled`, `Expired` or `Failed` (with the error) if it was not
 * sent, and once sent its SES message's own states with the `MessageId`.
 */
import type { StoredMessage } from '../shared/store/dynamodb-delivery-store';
import { formatSendAt } from '../shared/schedules/notices';
import type { ScheduleHead } from '../shared/schedules/schedule-store';
import { templateView } from '../shared/templates/template-rules';

type View = (message: StoredMessage) => { Status: string; Recipients: unknown[]; Tags: Readonly<Record<string, string>> };

export function scheduleView(asked: string, head: ScheduleHead, delivery: StoredMessage | undefined, view: View) {
  // A test key's schedule says so in every state, as every answer about a test message does.
  // A templated one names its version from the start: it was fixed when the request was accepted.
  // Recipients the suppression list left out at its time, as a send's result names them.
  const base = { ScheduleId: asked, SendAt: formatSendAt(head.sendAt), Tags: head.tags ?? {}, ...templateView(head.template), ...(head.test && { Test: true as const }), ...(head.suppressed && { Suppressed: head.suppressed }) };
  switch (head.state) {
    case 'Sent':
      // SES's first event usually arrives within seconds; until then the message is `Sent`.
      return { ...base, MessageId: head.messageId, ...(delivery ? view(delivery) : { Status: 'Sent', Recipients: [] }) };
    case 'Failed':
      return { ...base, Status: 'Failed', Recipients: [], ...(head.error && { Error: head.error }) };
    case 'Expired':
    case 'Cancelled':
      return { ...base, Status: head.state, Recipients: [] };
    default:
      return { ...base, Status: 'Scheduled', Recipients: [] };
  }
}
