/**
 * One cancel request (CONTRACT section 13): who is calling (the send endpoint's key and
 * Organization rules), which schedules, and for each `Cancelled`, `AlreadySent` or `Unknown`, in
 * request order. Only a schedule still waiting can be cancelled, with one conditional write that
 * also names the Organization, so a race with its firing has one winner and another
 * Organization's schedule reads exactly like one never made (`Unknown`). Plain function;
 * `handler.ts` is its HTTP face.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { Caller } from '../shared/auth/caller';
import { authoriseOrganization } from '../shared/auth/caller';
import { echoedIdsResponse } from '../shared/http/echoed-ids';
import type { CancelStatus } from '../shared/schedules/key-schedules';
import { cancelFor } from '../shared/schedules/key-schedules';
import type { ScheduleNotices } from '../shared/schedules/notices';
import type { ScheduleStore } from '../shared/schedules/schedule-store';
import type { ScheduleTimer } from '../shared/schedules/timer';
import type { AccessStore } from '../shared/store/ports';
import { withStorageFaults } from '../shared/store/storage-errors';
import { validateCancelRequest } from './validation';

export interface CancelDependencies {
  readonly access: AccessStore;
  readonly schedules: Pick<ScheduleStore, 'heads' | 'cancel' | 'settleNotice'>;
  readonly timer: Pick<ScheduleTimer, 'disarm'>;
  readonly notices: ScheduleNotices | undefined;
  readonly logger: Logger;
  readonly now: () => number;
}

export interface CancelInput {
  readonly caller: Caller;
  readonly body: unknown;
  readonly requestId: string;
}

export type { CancelStatus };

export async function handleCancelRequest(input: CancelInput, deps: CancelDependencies): Promise<APIGatewayProxyStructuredResultV2> {
  deps.logger.appendKeys({ userId: input.caller.userId });
  const request = validateCancelRequest(input.body);
  await authoriseOrganization(input.caller, request.organizationId, deps.access);
  deps.logger.appendKeys({ organizationId: request.organizationId, schedules: request.scheduleIds.length });

  const heads = await withStorageFaults(() => deps.schedules.heads(request.scheduleIds));
  const cancelling = { ...deps, warn: (message: string, details: Record<string, unknown>) => deps.logger.warn(message, details) };
  const outcome = new Map<string, CancelStatus>();
  await Promise.all(
    [...new Set(request.scheduleIds.map((id) => id.toLowerCase()))].map(async (id) => {
      outcome.set(id, await withStorageFaults(() => cancelFor(heads.get(id), request.organizationId, cancelling)));
    }),
  );
  const messages = request.scheduleIds.map((id) => ({ ScheduleId: id, Status: outcome.get(id.toLowerCase()) ?? 'Unknown' }));
  return echoedIdsResponse(messages, input.requestId);
}
