/** Inputs the templates endpoints and a templated message share: a version number and the variables. */
import { isWellFormedText } from '../domain/unicode';
import type { Json, ProblemList } from '../http/body-rules';
import { ILL_FORMED, isObject } from '../http/body-rules';
import { escapePointer } from '../http/json-pointer';

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
  if (isObject(value)) {
    wellFormed(value, pointer, problems);
    return value;
  }
  problems.add(pointer, value === undefined || value === null ? 'required: a JSON object of the variables the template uses' : 'must be a JSON object of the variables the template uses');
  return undefined;
}

/**
 * Every string in the variables, names too, is well-formed Unicode (CONTRACT section 2), used by
 * the template or not: each one that is not is named at its own pointer, and nothing is stored or
 * sent. (The depth of `Variables` is bounded when the body is parsed.)
 */
function wellFormed(value: unknown, pointer: string, problems: ProblemList): void {
  if (typeof value === 'string') {
    if (!isWellFormedText(value)) problems.add(pointer, ILL_FORMED);
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => wellFormed(item, `${pointer}/${index}`, problems));
  } else if (isObject(value)) {
    for (const [name, item] of Object.entries(value)) {
      const at = `${pointer}/${escapePointer(name)}`;
      if (!isWellFormedText(name)) problems.add(at, `its name ${ILL_FORMED}`);
      wellFormed(item, at, problems);
    }
  }
}
