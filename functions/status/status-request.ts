/**
 * One status request (CONTRACT section 10): who is calling (the send endpoint's key and
 * Organization rules), which messages, and what is recorded of each, in request order. A message
 * recorded for another Organization reads exactly like one never recorded (`Unknown`), so an id
 * tells nothing about whom it belongs to. Plain function; `handler.ts` is its HTTP face.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { Caller } from '../shared/auth/caller';
import { authoriseOrganization } from '../shared/auth/caller';
import { messageStatus } from '../shared/delivery/recipient-state';
import type { DeliveryStore } from '../shared/store/dynamodb-delivery-store';
import type { AccessStore } from '../shared/store/ports';
import { withStorageFaults } from '../shared/store/storage-errors';
import { recipientView } from '../shared/webhooks/payload';
import { validateStatusRequest } from './validation';

export interface StatusDependencies {
  readonly access: AccessStore;
  readonly deliveries: Pick<DeliveryStore, 'read'>;
  readonly logger: Logger;
}

export interface StatusInput {
  readonly caller: Caller;
  readonly body: unknown;
  readonly requestId: string;
}

export async function handleStatusRequest(input: StatusInput, deps: StatusDependencies): Promise<APIGatewayProxyStructuredResultV2> {
  deps.logger.appendKeys({ userId: input.caller.userId });
  const request = validateStatusRequest(input.body);
  await authoriseOrganization(input.caller, request.organizationId, deps.access);
  deps.logger.appendKeys({ organizationId: request.organizationId, messages: request.messageIds.length });

  const stored = await withStorageFaults(() => deps.deliveries.read(request.messageIds));
  const messages = request.messageIds.map((messageId) => {
    const message = stored.get(messageId);
    if (!message || message.organizationId !== request.organizationId) return { MessageId: messageId, Status: 'Unknown', Recipients: [], Tags: {} };
    const recipients = [...message.recipients].sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
    return { MessageId: messageId, Status: messageStatus(recipients), Recipients: recipients.map(recipientView), Tags: message.tags };
  });
  return {
    statusCode: 200,
    headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', 'X-Request-Id': input.requestId },
    body: JSON.stringify({ Messages: messages }),
  };
}
