/**
 * Webhooks of a schedule's own life (CONTRACT section 13): `email.scheduled` when it is made,
 * `email.cancelled` when it is cancelled, and `email.expired` or `email.failed` when its time came
 * and it was not sent. Once sent, SES's own events follow as for any message. The payload is the
 * Standard Webhooks shape of payload.ts; the webhook id is the schedule's and the event's, so a
 * repeat is recognisable. Queued on the same outbox as delivery events, so delivery, signing and
 * retries are the webhook function's, unchanged.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { TemplateReference } from '../templates/template-rules';
import { templateView } from '../templates/template-rules';
import type { WebhookJob } from '../webhooks/payload';
import type { WebhookOutbox } from '../webhooks/queue';
import type { WebhookConfigs } from '../webhooks/webhook-store';
import type { ScheduleError, ScheduleHead } from './schedule-model';

export const SCHEDULE_EVENT_TYPES = {
  Scheduled: 'email.scheduled',
  Cancelled: 'email.cancelled',
  Expired: 'email.expired',
  Failed: 'email.failed',
} as const;
export type ScheduleEventStatus = keyof typeof SCHEDULE_EVENT_TYPES;

export interface ScheduleEvent {
  readonly status: ScheduleEventStatus;
  readonly organizationId: string;
  readonly scheduleId: string;
  /** Epoch ms of `SendAt`. */
  readonly sendAt: number;
  /** Epoch ms of the event. */
  readonly at: number;
  readonly error?: ScheduleError;
  /** Recipients the suppression list left out at its time. */
  readonly suppressed?: readonly string[] | undefined;
  /** The client's message tags, echoed in the payload's `data` as on every other event. */
  readonly tags?: Readonly<Record<string, string>> | undefined;
  /** The template version it was rendered from, as every other answer about it names it. */
  readonly template?: TemplateReference | undefined;
  /** Scheduled with a test-mode key: its payloads say `Test: true`, as every answer about it does. */
  readonly test?: true | undefined;
}

/** The event of a stored schedule's change: everything it tells comes from the schedule's head. */
export function headEvent(head: ScheduleHead, status: ScheduleEventStatus, at: number, error?: ScheduleError): ScheduleEvent {
  const { organizationId, scheduleId, sendAt, tags, template, test, suppressed } = head;
  return { status, organizationId, scheduleId, sendAt, at, tags, template, test, suppressed, ...(error && { error }) };
}

/** `YYYY-MM-DD HH:MM:SS` of an epoch ms: `SendAt` as the client wrote it (UTC). */
export function formatSendAt(at: number): string {
  return new Date(at).toISOString().slice(0, 19).replace('T', ' ');
}

export function scheduleWebhookJob(event: ScheduleEvent): WebhookJob {
  const payload = {
    type: SCHEDULE_EVENT_TYPES[event.status],
    timestamp: new Date(event.at).toISOString(),
    data: {
      OrganizationId: event.organizationId,
      ScheduleId: event.scheduleId,
      Status: event.status,
      SendAt: formatSendAt(event.sendAt),
      ...(event.error && { Error: event.error }),
      ...(event.suppressed?.length && { Suppressed: event.suppressed }),
      Tags: event.tags ?? {},
      ...templateView(event.template),
      ...(event.test && { Test: true }),
    },
  };
  return { organizationId: event.organizationId, webhookId: `sch_${event.scheduleId}_${event.status.toLowerCase()}`, payload: JSON.stringify(payload) };
}

/** Tells the Organization's webhook, if it has one. */
export interface ScheduleNotices {
  notify(event: ScheduleEvent): Promise<void>;
}

export class WebhookScheduleNotices implements ScheduleNotices {
  constructor(
    private readonly webhooks: WebhookConfigs,
    private readonly outbox: WebhookOutbox,
    private readonly logger: Pick<Logger, 'warn'>,
  ) {}

  async notify(event: ScheduleEvent): Promise<void> {
    try {
      if (await this.webhooks.get(event.organizationId)) await this.outbox.enqueue(scheduleWebhookJob(event));
    } catch (error) {
      // The schedule's state is recorded and the status endpoint tells it; a lost notice must not
      // undo or fail the change it reports.
      this.logger.warn('could not queue a schedule webhook', { scheduleId: event.scheduleId, type: SCHEDULE_EVENT_TYPES[event.status], error: error as Error });
    }
  }
}
