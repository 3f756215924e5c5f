/**
 * The 200 answer of the status and cancel endpoints: one entry per id the caller asked about, in
 * its order. The ids are the caller's own, echoed, so key-like text in them is redacted: a key
 * sent as a `MessageId` or `ScheduleId` by mistake does not come back in plain text.
 */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { redactingReplacer } from '../domain/api-keys';

export function echoedIdsResponse(messages: readonly object[], requestId: string): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode: 200,
    headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', 'X-Request-Id': requestId },
    body: JSON.stringify({ Messages: messages }, redactingReplacer),
  };
}
