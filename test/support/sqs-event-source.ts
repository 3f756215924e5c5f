/**
 * What Lambda's SQS event source does for a function with `ReportBatchItemFailures`, played by a
 * test against a real queue (moto_server): receive a batch with its attributes, hand it to the
 * handler as an `SQSEvent`, delete the records the handler did not report failed. A failed record
 * stays in the queue and comes back when its visibility ends; past the queue's `maxReceiveCount`
 * the queue itself moves it to the dead-letter queue.
 */
import { DeleteMessageBatchCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { Message, SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { lambdaContext } from './events';

export type SqsFunction = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>;

export interface Poll {
  /** The records handed to the function (none when the queue had nothing visible). */
  readonly records: SQSRecord[];
  /** The message ids the function reported failed (left in the queue). */
  readonly failed: string[];
}

function toRecord(message: Message, queueArn: string): SQSRecord {
  return {
    messageId: message.MessageId!,
    receiptHandle: message.ReceiptHandle!,
    body: message.Body ?? '',
    attributes: message.Attributes as unknown as SQSRecord['attributes'],
    messageAttributes: {},
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: queueArn.split(':')[3] ?? 'us-east-1',
  };
}

/** One receive (waiting up to `waitSeconds` for a message), one invocation, the deletes. */
export async function pollOnce(sqs: SQSClient, queue: { url: string; arn: string }, fn: SqsFunction, waitSeconds = 0): Promise<Poll> {
  const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queue.url, MaxNumberOfMessages: 10, WaitTimeSeconds: waitSeconds, MessageSystemAttributeNames: ['All'] }));
  if (Messages.length === 0) return { records: [], failed: [] };
  const records = Messages.map((message) => toRecord(message, queue.arn));
  const answer = await fn({ Records: records }, lambdaContext());
  const failed = (answer?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier);
  const done = records.filter((record) => !failed.includes(record.messageId));
  if (done.length > 0) {
    await sqs.send(new DeleteMessageBatchCommand({ QueueUrl: queue.url, Entries: done.map((record, i) => ({ Id: String(i), ReceiptHandle: record.receiptHandle })) }));
  }
  return { records, failed };
}

/** Every message now visible in a queue, received and left there (it comes back after `visibilitySeconds`). */
export async function peek(sqs: SQSClient, queueUrl: string, visibilitySeconds = 0): Promise<Message[]> {
  const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, VisibilityTimeout: visibilitySeconds, MessageSystemAttributeNames: ['All'] }));
  return Messages;
}
