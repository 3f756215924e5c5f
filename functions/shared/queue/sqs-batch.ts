/**
 * An SQS-triggered function's records, each handled on its own, with partial batch failures
 * (`ReportBatchItemFailures`): only the records that failed come back, the rest are deleted. The
 * events function and the webhook delivery function both run this way, in Lambda and locally.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { Tracing } from '../runtime/observability';
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

/**
 * The middy chain of an SQS-triggered function: tracing when on, the logger's Lambda context (never
 * the event, which holds message bodies), metrics, then `eachRecord` with the function's own handling.
 */
export function sqsBatchHandler(
  deps: { readonly logger: Logger; readonly metrics: Metrics },
  tracing: Tracing | undefined,
  handle: (record: SQSRecord, context: Context) => Promise<boolean>,
  onError: (record: SQSRecord, error: unknown) => void,
) {
  const chain = middy<SQSEvent, SQSBatchResponse, Error, Context>();
  if (tracing) chain.use(tracing.middleware);
  return chain
    .use(injectLambdaContext(deps.logger, { resetKeys: true, logEvent: false }))
    .use(logMetrics(deps.metrics))
    .handler((event, context) => eachRecord(event, (record) => handle(record, context), onError));
}
