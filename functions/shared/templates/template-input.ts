/** Inputs the templates endpoints and a templated message share: a version number and the variables. */
import type { Json, ProblemList } from '../http/body-rules';
import { isObject } from '../http/body-rules';

/** Versions are numbered from 1; this is far past any that will be made. */
const MAX_VERSION = 1_000_000_000;

/** A version number: a JSON number, or digits in a query string (`inQuery`). */
export function readVersion(value: unknown, pointer: string, problems: ProblemList, inQuery = false): number | undefined {
  if (value === undefined || value === null) return undefined;
  const number = inQuery && typeof value === 'string' && /^[0-9]{1,10}$/.test(value) ? Number(value) : value;
  if (typeof number === 'number' && Number.isInteger(number) && number >= 1 && number <= MAX_VERSION) return number;
  problems.add(pointer, 'must be a version number: a whole number from 1');
  return undefined;
}

/** The variables of a render or a templated message: a JSON object. */
export function readVariables(value: unknown, pointer: string, problems: ProblemList): Json | undefined {
  if (isObject(value)) return value;
  problems.add(pointer, value === undefined || value === null ? 'required: a JSON object of the variables the template uses' : 'must be a JSON object of the variables the template uses');
  return undefined;
}

