/**
 * EventBridge Scheduler and the schedule queue, played in-process for the local stack
 * (CONTRACT section 13, item 4). Arming a schedule sets a timer; when it fires, the wake-up goes
 * to a local queue consumed by the scheduled-send function's own handler, so a schedule fires
 * through exactly the path it takes in AWS (queue → handler → fire.ts → the send pipeline).
 *
 * Durability comes from the table, not from the timers: every schedule is stored in dynalite
 * (on disk under .local/ unless LOCAL_DATA=memory) with the time it is next due, and on start
 * `resume` reads every schedule not yet final and arms it again; one whose time passed while the
 * stack was down fires at once. Firing twice is harmless (fire.ts claims before it sends), so two
 * stacks sharing one DynamoDB may both arm the same schedule.
 */
import type { EventSink } from '../../functions/shared/mail/test-mailer';
import { createCancelDependencies } from '../../functions/cancel/dependencies';
import { CANCEL_PATH, createCancelHandler } from '../../functions/cancel/handler';
import { createFireDependencies } from '../../functions/scheduled/dependencies';
import { createScheduledHandler } from '../../functions/scheduled/handler';
import type { LocalParts } from '../../functions/send/dependencies';
import type { Credentials, Instrument } from '../../functions/shared/runtime/clients';
import type { Config } from '../../functions/shared/runtime/config';
import type { ScheduleStore } from '../../functions/shared/schedules/schedule-store';
import type { ScheduleTimer, ScheduleWakeUp } from '../../functions/shared/schedules/timer';
import type { WebhookOutbox } from '../../functions/shared/webhooks/queue';
import type { GatewayRoute, LambdaHandler } from './gateway/routing';
import { LocalQueue } from './local-queue';

/** setTimeout's longest delay (about 24.8 days); a later time is reached in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class LocalScheduler implements ScheduleTimer {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private stopped = false;

  constructor(
    private readonly queue: Pick<LocalQueue, 'send'>,
    private readonly now: () => number = Date.now,
  ) {}

  async arm(scheduleId: string, at: number): Promise<void> {
    this.set(scheduleId, at);
  }

  async disarm(scheduleId: string): Promise<void> {
    clearTimeout(this.timers.get(scheduleId));
    this.timers.delete(scheduleId);
  }

  /** Arms every schedule the table holds that is not final yet; returns how many. */
  async resume(store: Pick<ScheduleStore, 'pending'>): Promise<number> {
    const pending = await store.pending();
    for (const { scheduleId, dueAt } of pending) this.set(scheduleId, dueAt);
    return pending.length;
  }

  /** How many schedules have a timer set (tests, and the start-up line). */
  get armed(): number {
    return this.timers.size;
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  private set(scheduleId: string, at: number): void {
    if (this.stopped) return;
    clearTimeout(this.timers.get(scheduleId));
    const delay = Math.max(0, at - this.now());
    const timer = setTimeout(() => {
      this.timers.delete(scheduleId);
      if (delay > MAX_TIMER_MS) this.set(scheduleId, at);
      else this.queue.send(JSON.stringify({ scheduleId } satisfies ScheduleWakeUp));
    }, Math.min(delay, MAX_TIMER_MS));
    // A schedule days away must not keep a stopping process alive; the table keeps it.
    timer.unref();
    this.timers.set(scheduleId, timer);
  }
}

export interface LocalScheduledSendOptions {
  readonly config: Config;
  readonly credentials: Credentials | undefined;
  /** Marks the SES client's requests as the service's own (the local SES front's secret). */
  readonly ownSends?: Instrument | undefined;
  /** The webhook queue of the local lifecycle, for `email.scheduled` and the rest. */
  readonly outbox: WebhookOutbox;
  /** The local events queue, where test mode's simulated events go. */
  readonly testEvents: EventSink;
  readonly log: (line: string) => void;
}

export interface LocalScheduledSend {
  /** For the send function's dependencies, in place of EventBridge Scheduler. */
  readonly parts: LocalParts;
  readonly scheduler: LocalScheduler;
  readonly queue: LocalQueue;
  /** `POST /v1.2/email/cancel`, the cancel function's own handler. */
  readonly cancelRoute: GatewayRoute;
  stop(): Promise<void>;
}

/**
 * The scheduled-send function on its local queue, the timer that feeds it, and the cancel route.
 * Call `scheduler.resume` once the table exists to arm the schedules stored before a restart.
 */
export function startLocalScheduledSend(options: LocalScheduledSendOptions): LocalScheduledSend {
  const { config, credentials, ownSends, outbox, testEvents, log } = options;
  // Its sends are the service's own, marked so the mailbox simulator makes their events.
  const clients = { credentials, ...(ownSends && { instrument: ownSends }) };
  // A wake-up that fails (the table down) comes back after a second, and keeps coming back: locally
  // there is no dead-letter queue to watch, and a restart would arm it again anyway.
  const queue = new LocalQueue({ name: 'scheduled-send', region: config.region, maxReceiveCount: Number.MAX_SAFE_INTEGER, visibilitySeconds: 1, log });
  const scheduler = new LocalScheduler(queue);
  const parts: LocalParts = { timer: scheduler, outbox, testEvents };
  queue.consume(createScheduledHandler(createFireDependencies(config, clients, parts)));
  const cancelHandler = createCancelHandler(createCancelDependencies(config, clients, parts));
  return {
    parts,
    scheduler,
    queue,
    cancelRoute: { method: 'POST', path: CANCEL_PATH, handler: cancelHandler as unknown as LambdaHandler, functionName: 'email-send-api-cancel-local' },
    async stop() {
      scheduler.stop();
      await queue.stop();
    },
  };
}
