/**
 * An SQS queue with a Lambda event source, played in-process for the local stack: messages are
 * handed to the consumer (the very handler Lambda runs) as SQS events of one record, a record the
 * consumer reports failed comes back after its visibility timeout (which the consumer may change,
 * as the webhook function does for its backoff), and after `maxReceiveCount` receives it goes to a
 * dead-letter list, as SQS's redrive policy would. Nothing survives a restart: locally a queue is
 * a convenience, not a durability promise.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { WebhookJob } from '../../functions/shared/webhooks/payload';
import type { RetryScheduler, WebhookOutbox } from '../../functions/shared/webhooks/queue';
import { lambdaContext } from './gateway/event';

/** What the local consumer function gets as its Lambda timeout. */
const CONSUMER_TIMEOUT_MS = 30_000;

export type QueueConsumer = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>;

export interface LocalQueueOptions {
  readonly name: string;
  readonly region: string;
  /** Receives before a message goes to the dead-letter list. */
  readonly maxReceiveCount: number;
  /** Seconds a failed record stays hidden unless the consumer says otherwise. */
  readonly visibilitySeconds: number;
  /** Multiplies every delay (tests shrink hours of backoff to milliseconds). */
  readonly timeScale?: number;
  readonly log?: (line: string) => void;
}

interface Message {
  readonly id: string;
  readonly body: string;
  readonly sentAt: number;
  receives: number;
  /** Set by `retryLater` for the current receive. */
  hideSeconds?: number;
}

export class LocalQueue implements WebhookOutbox, RetryScheduler {
  readonly dead: string[] = [];
  private consumer: QueueConsumer | undefined;
  private readonly messages = new Map<string, Message>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly running = new Set<Promise<void>>();
  private stopped = false;

  constructor(private readonly options: LocalQueueOptions) {}

  /** The function that receives this queue's records; messages sent before it is set wait. */
  consume(consumer: QueueConsumer): void {
    this.consumer = consumer;
    for (const message of this.messages.values()) if (message.receives === 0) this.later(message, 0);
  }

  send(body: string, delayMs = 0): void {
    const message: Message = { id: randomUUID(), body, sentAt: Date.now(), receives: 0 };
    this.messages.set(message.id, message);
    if (this.consumer) this.later(message, delayMs);
  }

  async enqueue(job: WebhookJob): Promise<void> {
    this.send(JSON.stringify(job));
  }

  async retryLater(receiptHandle: string, delaySeconds: number): Promise<void> {
    const message = this.messages.get(receiptHandle.split(':')[0] ?? '');
    if (message) message.hideSeconds = delaySeconds;
  }

  /** Resolves once nothing is being received (tests wait for it). */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await this.settled();
  }

  private later(message: Message, delayMs: number): void {
    if (this.stopped) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      const run = this.receive(message).finally(() => this.running.delete(run));
      this.running.add(run);
    }, delayMs * (this.options.timeScale ?? 1));
    // A waiting retry must not keep a stopping process alive.
    timer.unref();
    this.timers.add(timer);
  }

  private async receive(message: Message): Promise<void> {
    if (!this.consumer || this.stopped) return;
    message.receives++;
    message.hideSeconds = undefined;
    let failed = true;
    try {
      const context = lambdaContext({ region: this.options.region, functionName: `email-send-api-${this.options.name}-local`, timeoutMs: CONSUMER_TIMEOUT_MS });
      const answer = await this.consumer({ Records: [this.record(message)] }, context);
      failed = (answer?.batchItemFailures ?? []).some((failure) => failure.itemIdentifier === message.id);
    } catch (error) {
      this.options.log?.(`${this.options.name}: the consumer failed (${error instanceof Error ? error.message : String(error)})`);
    }
    if (!failed) {
      this.messages.delete(message.id);
      return;
    }
    if (message.receives >= this.options.maxReceiveCount) {
      this.messages.delete(message.id);
      this.dead.push(message.body);
      this.options.log?.(`${this.options.name}: a message failed ${message.receives} times and went to the dead-letter list`);
      return;
    }
    this.later(message, (message.hideSeconds ?? this.options.visibilitySeconds) * 1_000);
  }

  private record(message: Message): SQSRecord {
    const now = String(Date.now());
    return {
      messageId: message.id,
      receiptHandle: `${message.id}:${message.receives}`,
      body: message.body,
      attributes: {
        ApproximateReceiveCount: String(message.receives),
        SentTimestamp: String(message.sentAt),
        SenderId: 'local',
        ApproximateFirstReceiveTimestamp: now,
      },
      messageAttributes: {},
      md5OfBody: createHash('md5').update(message.body).digest('hex'),
      eventSource: 'aws:sqs',
      eventSourceARN: `arn:aws:sqs:${this.options.region}:000000000000:${this.options.name}`,
      awsRegion: this.options.region,
    };
  }
}
