/**
 * The mailer of test mode (docs/keys.md): it holds no SES client, so a test key's message cannot
 * reach Amazon SES whatever else goes wrong. It answers as SES would, with a message id of the
 * test form (`test-…`, domain/test-mode.ts), and hands the events SES's mailbox simulator would
 * publish for the message's recipients (delivery/mailbox-simulator.ts) to the events queue, where
 * the same events code records them as it records SES's own.
 *
 * The events go out at once rather than at SES's delays: a Lambda function is frozen once it has
 * answered, and the events code takes them in any order (the recorded state never goes backwards).
 */
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { simulatedEvents } from '../delivery/mailbox-simulator';
import { testMessageId } from '../domain/test-mode';
import type { Mailer, OutgoingEmail, SendReceipt } from './ports';
import { SendFailure } from './ports';
import { emailTags, formatFromAddress } from './ses-message';
import { configurationSetFor, NO_TRACKING } from './tracking';

/** Where simulated events go: the events function's queue. */
export interface EventSink {
  publish(events: readonly Record<string, unknown>[]): Promise<void>;
}

/** The events queue in AWS (the queue SES's own events reach through EventBridge). */
export class SqsEventSink implements EventSink {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async publish(events: readonly Record<string, unknown>[]): Promise<void> {
    // At most four events a message (Send, Delivery, Bounce, Complaint): one batch of at most ten.
    const { Failed } = await this.client.send(
      new SendMessageBatchCommand({ QueueUrl: this.queueUrl, Entries: events.map((event, i) => ({ Id: String(i), MessageBody: JSON.stringify(event) })) }),
    );
    if (Failed && Failed.length > 0) throw new Error(`the events queue refused ${Failed.length} simulated event(s)`);
  }
}

export interface TestMailerOptions {
  readonly region: string;
  readonly configurationSet?: string | undefined;
  readonly now?: () => number;
}

export class TestMailer implements Mailer {
  constructor(
    private readonly sink: EventSink,
    private readonly options: TestMailerOptions,
  ) {}

  async send(email: OutgoingEmail): Promise<SendReceipt> {
    const messageId = testMessageId();
    const events = simulatedEvents({
      messageId,
      from: formatFromAddress(email.from, email.displayName),
      to: email.to,
      cc: email.cc,
      bcc: email.bcc,
      subject: email.subject,
      tags: emailTags(email),
      // The set a live send would name, so the simulated events carry it; test mode makes no open or click events.
      configurationSet: configurationSetFor(this.options.configurationSet, email.tracking ?? NO_TRACKING),
      region: this.options.region,
      sentAt: (this.options.now ?? Date.now)(),
    });
    try {
      await this.sink.publish(events.map(({ event }) => event));
    } catch (error) {
      // Not a word of the queue's answer to the client: the message counts as not sent, to retry.
      throw new SendFailure('SesUnavailable', { cause: error });
    }
    return { messageId };
  }
}
