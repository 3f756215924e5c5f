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
import { testMark } from '../shared/domain/test-mode';
import { echoedIdsResponse } from '../shared/http/echoed-ids';
import type { ScheduleStore } from '../shared/schedules/schedule-store';
import type { DeliveryStore, StoredMessage } from '../shared/store/dynamodb-delivery-store';
import type { Engagement } from '../shared/store/dynamodb-engagement-store';
import type { AccessStore } from '../shared/store/ports';
import { withStorageFaults } from '../shared/store/storage-errors';
import { recipientView } from '../shared/webhooks/payload';
import { templateView } from '../shared/templates/template-rules';
import { scheduleView } from './schedule-status';
import { validateStatusRequest } from './validation';

export interface StatusDependencies {
  readonly access: AccessStore;
  readonly deliveries: Pick<DeliveryStore, 'read'>;
  /** Scheduled messages (CONTRACT section 13): their ids are answered as well as SES message ids. */
  readonly schedules: Pick<ScheduleStore, 'heads'>;
  readonly logger: Logger;
}

/** Opens and clicks as the status answer tells them (CONTRACT section 17 item 4); they never change `Status`. */
function engagementView(engagement: Pick<Engagement, 'opens' | 'firstOpenedAt' | 'clicks'>) {
  return { Opens: engagement.opens, FirstOpenedAt: engagement.firstOpenedAt ?? null, Clicks: engagement.clicks.map((click) => ({ Url: click.url, At: click.at })) };
}

const NOT_ENGAGED = engagementView({ opens: 0, firstOpenedAt: undefined, clicks: [] });

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

  const ids = [...request.messageIds, ...request.scheduleIds];
  const [stored, schedules] = await withStorageFaults(() => Promise.all([deps.deliveries.read(request.messageIds), deps.schedules.heads(ids)]));
  const mine = <T extends { readonly organizationId: string }>(item: T | undefined): T | undefined => (item?.organizationId === request.organizationId ? item : undefined);
  // A sent schedule's delivery states are its SES message's: read those too, in one more round trip.
  const sentIds = [...schedules.values()].flatMap((head) => (mine(head) && head.messageId && !stored.has(head.messageId) ? [head.messageId] : []));
  const sent = sentIds.length > 0 ? await withStorageFaults(() => deps.deliveries.read(sentIds)) : new Map<string, StoredMessage>();
  const deliveryOf = (messageId: string | undefined) => (messageId === undefined ? undefined : mine(stored.get(messageId) ?? sent.get(messageId)));
  const view = (message: StoredMessage) => {
    const recipients = [...message.recipients].sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
    // A recipient's opens and clicks are the message's when it was the only one (SES does not say who opened).
    const ofRecipient = (address: string) => (address === message.engagement.recipient ? engagementView(message.engagement) : NOT_ENGAGED);
    return {
      Status: messageStatus(recipients),
      Recipients: recipients.map((recipient) => ({ ...recipientView(recipient), ...ofRecipient(recipient.address) })),
      Tags: message.tags,
      ...templateView(message.template),
      ...engagementView(message.engagement),
    };
  };

  const messages = [
    ...request.messageIds.map((messageId) => {
      const message = deliveryOf(messageId);
      if (message) return { MessageId: messageId, ...view(message), ...testMark(messageId) };
      const schedule = mine(schedules.get(messageId.toLowerCase()));
      if (schedule) return scheduleView(messageId, schedule, deliveryOf(schedule.messageId), view);
      return { MessageId: messageId, Status: 'Unknown', Recipients: [], Tags: {} };
    }),
    ...request.scheduleIds.map((scheduleId) => {
      const schedule = mine(schedules.get(scheduleId.toLowerCase()));
      return schedule ? scheduleView(scheduleId, schedule, deliveryOf(schedule.messageId), view) : { ScheduleId: scheduleId, Status: 'Unknown', Recipients: [], Tags: {} };
    }),
  ];
  return echoedIdsResponse(messages, input.requestId);
}
