/**
 * The cancel request's body (CONTRACT section 13): `{ "OrganizationId", "ScheduleIds": [1..100] }`,
 * with the send endpoint's rules for the Organization id (either spelling), unknown fields and
 * problem lists (functions/shared/http/body-rules.ts).
 */
import type { Json } from '../shared/http/body-rules';
import { ILL_FORMED, ProblemList, isObject, own, unknownFields, validateOrganizationId } from '../shared/http/body-rules';
import { isWellFormedText } from '../shared/domain/unicode';
import { ValidationProblem } from '../shared/http/problems';

export const MAX_SCHEDULE_IDS = 100;
/** A ScheduleId is a UUID; anything else of this shape is answered `Unknown`, as an id never issued. */
const SCHEDULE_ID = /^[\x21-\x7e]{1,200}$/;
const FIELDS = new Set(['OrganizationId', 'organizationId', 'ScheduleIds']);

export interface CancelRequest {
  /** Lower-case, for lookups. */
  readonly organizationId: string;
  /** In request order, repeats kept: each is answered where it was asked. */
  readonly scheduleIds: readonly string[];
}

/** `ScheduleIds` (or the status request's): 1..100 ids, each a string of printable ASCII. */
export function validateIdList(body: Json, field: string, problems: ProblemList, what: string, required = true): string[] {
  const value = own(body, field);
  if (value === undefined || value === null) {
    if (required) problems.add(`/${field}`, `required: an array of 1 to ${MAX_SCHEDULE_IDS} ${what}`);
    return [];
  }
  if (!Array.isArray(value)) {
    problems.add(`/${field}`, `must be an array of ${what}`);
    return [];
  }
  if (value.length === 0 && required) problems.add(`/${field}`, `must hold at least 1 id`);
  if (value.length > MAX_SCHEDULE_IDS) {
    problems.add(`/${field}`, `${value.length} ids; at most ${MAX_SCHEDULE_IDS} are allowed per request`);
    return [];
  }
  value.forEach((id, i) => {
    if (typeof id === 'string' && !isWellFormedText(id)) problems.add(`/${field}/${i}`, ILL_FORMED);
    else if (typeof id !== 'string' || !SCHEDULE_ID.test(id)) problems.add(`/${field}/${i}`, 'must be an id: 1 to 200 printable ASCII characters, no spaces');
  });
  return value as string[];
}

export function validateCancelRequest(body: unknown): CancelRequest {
  if (!isObject(body)) throw new ValidationProblem([{ pointer: '', detail: 'the body must be a JSON object with OrganizationId and ScheduleIds' }]);
  const problems = new ProblemList();
  unknownFields(body, FIELDS, '', problems);
  const organizationId = validateOrganizationId(body, problems);
  const scheduleIds = validateIdList(body, 'ScheduleIds', problems, 'ScheduleIds (from Scheduled results)');
  if (problems.count > 0 || organizationId === undefined) throw new ValidationProblem(problems.items, { total: problems.count });
  return { organizationId: organizationId.toLowerCase(), scheduleIds };
}
