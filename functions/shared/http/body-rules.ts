/**
 * Rules every JSON body of the API follows (send, status): problems collected with their JSON
 * pointers rather than stopping at the first, unknown fields refused by name, well-formed
 * Unicode, and the Organization id in either spelling (CONTRACT section 2).
 */
import { isWellFormedText } from '../domain/unicode';
import { isCanonicalUuid } from '../domain/uuid';
import { escapePointer } from './json-pointer';
import type { FieldProblem } from './problems';
import { MAX_LISTED_PROBLEMS } from './problems';

export const ILL_FORMED = 'must be well-formed Unicode: it holds a lone surrogate (an unpaired \\uD800–\\uDFFF escape)';

export type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
export const own = (object: Json, field: string): unknown => (Object.hasOwn(object, field) ? object[field] : undefined);
/** `own` of a value not yet known to be an object (or an array): undefined for anything else. */
export const ownOf = (value: unknown, field: string): unknown => (typeof value === 'object' && value !== null ? own(value as Json, field) : undefined);

/** Problems found so far: all are counted, the first ones kept (the answer lists no more). */
export class ProblemList {
  readonly items: FieldProblem[] = [];
  count = 0;
  add(pointer: string, detail: string): void {
    this.count++;
    if (this.items.length < MAX_LISTED_PROBLEMS) this.items.push({ pointer, detail });
  }
}

/** A string field's value, or a problem: not a string, or not well-formed Unicode. */
export function textField(value: unknown, pointer: string, problems: ProblemList, what = 'must be a string'): string | undefined {
  if (typeof value !== 'string') {
    problems.add(pointer, what);
    return undefined;
  }
  if (!isWellFormedText(value)) {
    problems.add(pointer, ILL_FORMED);
    return undefined;
  }
  return value;
}

export function unknownFields(object: Json, allowed: ReadonlySet<string>, base: string, problems: ProblemList): void {
  for (const field of Object.keys(object)) {
    if (!allowed.has(field)) problems.add(`${base}/${escapePointer(field)}`, `unknown field "${field}"`);
  }
}

export function validateOrganizationId(body: Json, problems: ProblemList): string | undefined {
  // null counts as absent, as for every optional field: only a value can conflict.
  const upper = own(body, 'OrganizationId') ?? undefined;
  const lower = own(body, 'organizationId') ?? undefined;
  if (upper === undefined && lower === undefined) {
    problems.add('/OrganizationId', 'required: the UUID of the Organization to send in');
    return undefined;
  }
  let valid: string | undefined;
  for (const [field, value] of [['OrganizationId', upper], ['organizationId', lower]] as const) {
    if (value === undefined) continue;
    if (typeof value === 'string' && !isWellFormedText(value)) problems.add(`/${field}`, ILL_FORMED);
    else if (!isCanonicalUuid(value)) problems.add(`/${field}`, 'must be a UUID in 8-4-4-4-12 hex form');
    else valid ??= value;
  }
  if (isCanonicalUuid(upper) && isCanonicalUuid(lower) && upper.toLowerCase() !== lower.toLowerCase()) {
    problems.add('/organizationId', 'conflicts with OrganizationId: give one spelling, or both with the same value');
    return undefined;
  }
  return valid;
}
