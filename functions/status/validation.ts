/**
 * The status request's body (CONTRACT sections 10 and 13): `{ "OrganizationId", "MessageIds": [1..100] }`,
 * where an id may also be a ScheduleId, or the ScheduleIds in a list of their own (`ScheduleIds`);
 * 1 to 100 ids in all,
 * with the send endpoint's rules for the Organization id (either spelling), unknown fields and
 * problem lists (functions/shared/http/body-rules.ts).
 */
import type { Json } from '../shared/http/body-rules';
import { ILL_FORMED, ProblemList, isObject, own, unknownFields, validateOrganizationId } from '../shared/http/body-rules';
import { isWellFormedText } from '../shared/domain/unicode';
import { ValidationProblem } from '../shared/http/problems';
import { validateIdList } from '../cancel/validation';

export const MAX_MESSAGE_IDS = 100;
/** SES message ids are about 60 printable ASCII characters; this leaves room and no more. */
const MESSAGE_ID = /^[\x21-\x7e]{1,200}$/;
const FIELDS = new Set(['OrganizationId', 'organizationId', 'MessageIds', 'ScheduleIds']);

export interface StatusRequest {
  /** Lower-case, for lookups. */
  readonly organizationId: string;
  /** In request order, repeats kept: each is answered where it was asked. */
  readonly messageIds: readonly string[];
  /** Answered after the message ids, in their order. */
  readonly scheduleIds: readonly string[];
}

export function validateStatusRequest(body: unknown): StatusRequest {
  if (!isObject(body)) throw new ValidationProblem([{ pointer: '', detail: 'the body must be a JSON object with OrganizationId and MessageIds' }]);
  const problems = new ProblemList();
  unknownFields(body, FIELDS, '', problems);
  const organizationId = validateOrganizationId(body, problems);
  const hasScheduleIds = own(body, 'ScheduleIds') !== undefined && own(body, 'ScheduleIds') !== null;
  const messageIds = hasScheduleIds && (own(body, 'MessageIds') === undefined || own(body, 'MessageIds') === null) ? [] : validateMessageIds(body, problems);
  const scheduleIds = validateIdList(body, 'ScheduleIds', problems, 'ScheduleIds', false);
  if (messageIds.length + scheduleIds.length > MAX_MESSAGE_IDS) problems.add('', `${messageIds.length + scheduleIds.length} ids in MessageIds and ScheduleIds together; at most ${MAX_MESSAGE_IDS} are allowed`);
  if (hasScheduleIds && messageIds.length + scheduleIds.length === 0) problems.add('/ScheduleIds', 'must hold at least 1 id');
  if (problems.count > 0 || organizationId === undefined) throw new ValidationProblem(problems.items, { total: problems.count });
  return { organizationId: organizationId.toLowerCase(), messageIds, scheduleIds };
}

function validateMessageIds(body: Json, problems: ProblemList): string[] {
  const value = own(body, 'MessageIds');
  if (value === undefined || value === null) {
    problems.add('/MessageIds', `required: an array of 1 to ${MAX_MESSAGE_IDS} SES message ids`);
    return [];
  }
  if (!Array.isArray(value)) {
    problems.add('/MessageIds', 'must be an array of SES message ids');
    return [];
  }
  if (value.length === 0) problems.add('/MessageIds', 'must hold at least 1 message id');
  if (value.length > MAX_MESSAGE_IDS) {
    problems.add('/MessageIds', `${value.length} message ids; at most ${MAX_MESSAGE_IDS} are allowed per request`);
    return [];
  }
  value.forEach((id, i) => {
    if (typeof id === 'string' && !isWellFormedText(id)) problems.add(`/MessageIds/${i}`, ILL_FORMED);
    else if (typeof id !== 'string' || !MESSAGE_ID.test(id)) problems.add(`/MessageIds/${i}`, 'must be an SES message id: 1 to 200 printable ASCII characters, no spaces');
  });
  return value as string[];
}
