/**
 * The durable queue between recording an event and delivering its webhook, so that a slow or
 * dead endpoint holds up nothing else (CONTRACT section 10). In AWS it is an SQS queue: the
 * events function sends to it, the delivery function receives from it and, after a failed
 * attempt, hides the message for the next backoff delay (`ChangeMessageVisibility`); after the
 * last attempt SQS moves it to the dead-letter queue. Locally, infra/local/local-queue.ts plays it.
 */
import { ChangeMessageVisibilityCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { WebhookJob } from './payload';

export interface WebhookOutbox {
  enqueue(job: WebhookJob): Promise<void>;
}

export interface RetryScheduler {
  /** The message comes back after `delaySeconds` (at most 12 hours, SQS's limit). */
  retryLater(receiptHandle: string, delaySeconds: number): Promise<void>;
}

export class SqsWebhookQueue implements WebhookOutbox, RetryScheduler {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async enqueue(job: WebhookJob): Promise<void> {
    await this.client.send(new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: JSON.stringify(job) }));
  }

  async retryLater(receiptHandle: string, delaySeconds: number): Promise<void> {
    await this.client.send(new ChangeMessageVisibilityCommand({ QueueUrl: this.queueUrl, ReceiptHandle: receiptHandle, VisibilityTimeout: delaySeconds }));
  }
}
