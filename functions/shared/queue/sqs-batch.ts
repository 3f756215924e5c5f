/**
 * An SQS-triggered function's records, each handled on its own, with partial batch failures
 * (`ReportBatchItemFailures`): only the records that failed come back, the rest are deleted. The
 * events function and the webhook delivery function both run this way, in Lambda and locally.
 */
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { mapWithConcurrency } from '../runtime/pool';

/** Records of one batch handled at once; a batch holds at most 10 by the stack's event source. */
const CONCURRENCY = 10;

/** `handle` resolves true when done, false (or throws) when the record must come back later. */
export async function eachRecord(event: SQSEvent, handle: (record: SQSRecord) => Promise<boolean>, onError: (record: SQSRecord, error: unknown) => void): Promise<SQSBatchResponse> {
  const done = await mapWithConcurrency(event.Records ?? [], CONCURRENCY, async (record) => {
    try {
      return await handle(record);
    } catch (error) {
      onError(record, error);
      return false;
    }
  });
  return { batchItemFailures: (event.Records ?? []).filter((_, i) => !done[i]).map((record) => ({ itemIdentifier: record.messageId })) };
}
