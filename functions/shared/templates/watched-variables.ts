/**
 * The template engine's view of a message's variables (engine.ts, layer 3): a proxy that counts
 * every lookup (a rendering past `TEMPLATE_LIMITS.renderSteps` stops) and records, by JSON pointer,
 * the name strict mode did not find, the scalar it looked a name up in, or the list or object it
 * was asked to print, so the client learns `/Variables/user/firstName`, and no message says
 * Handlebars' `[object Object]`.
 */
import { escapePointer } from '../http/json-pointer';
import { TEMPLATE_LIMITS } from './template-rules';

export class RenderBudgetExceeded extends Error {
  constructor() {
    super('rendering exceeded its step budget');
    this.name = 'RenderBudgetExceeded';
  }
}

/**
 * What a list or object turns into when Handlebars makes text of it (`{{order}}`; it would write
 * `[object Object]`): a marker naming the variable, found in the rendered field afterwards
 * (`printedNotScalar`). Not an error thrown on the spot: Handlebars also turns a context into a
 * primitive to compare it (`context != depths[0]`), which must go on as before. The marker holds
 * the rendering's own random nonce, so no variable's text can pass for one, or hide one.
 */
function marker(nonce: string, index: number): string {
  return `\u0000${nonce}:${index}\u0000`;
}

/** The first list or object `rendered` holds as text, by its pointer, or undefined. */
export function printedNotScalar(rendered: string, tracking: Tracking): Tracking['printed'][number] | undefined {
  if (tracking.printed.length === 0) return undefined;
  // The nonce is base64url: nothing in it means anything to a regular expression.
  const index = new RegExp(`\u0000${tracking.nonce}:(\\d+)\u0000`).exec(rendered)?.[1];
  return index === undefined ? undefined : tracking.printed[Number(index)];
}

export interface Tracking {
  steps: number;
  /**
   * The first name strict mode's check (`in`, the `has` trap) did not find: strict mode throws at
   * once, and what it reads to word its error (a list's items) must not hide it.
   */
  failedCheck: string | undefined;
  /**
   * A name read plainly and not found: the cause when the lookup after it fails on undefined
   * (`{{order.id}}` without `order`). A name found after it means that miss threw nothing.
   */
  readMiss: string | undefined;
  /** The variable last read, when it is not an object: a name looked up in it next fails. */
  scalar: { readonly pointer: string; readonly is: string; readonly text: string } | undefined;
  /** Pointers already reported missing: they read as empty so the next rendering finds the next one. */
  readonly filled: Set<string>;
  /** Lists and objects made text of, by marker number (`marker`), and the rendering's nonce for the markers. */
  readonly printed: { readonly pointer: string; readonly is: 'a list' | 'an object' }[];
  readonly nonce: string;
}

/**
 * What a variable already reported missing reads as while rendering again for the next one: empty
 * when printed, and every path through it present (and as empty), so `{{order.id}}` with `order`
 * missing is reported once, at `/order`, and not again as an error of the field.
 */
const FILLER: object = new Proxy(
  {},
  {
    has: (_target, key) => typeof key === 'string',
    get: (_target, key) => {
      if (key === Symbol.toPrimitive || key === 'toString' || key === 'toHTML') return () => '';
      return typeof key === 'string' ? FILLER : undefined;
    },
    getOwnPropertyDescriptor: (_target, key) => (typeof key === 'string' ? { value: FILLER, writable: false, enumerable: false, configurable: true } : undefined),
  },
);

export function watch(value: object, pointer: string, tracking: Tracking): object {
  return new Proxy(value, {
    has(target, key) {
      if (typeof key !== 'string') return false;
      if (Object.hasOwn(target, key)) return true;
      const at = `${pointer}/${escapePointer(key)}`;
      if (tracking.filled.has(at)) return true;
      tracking.failedCheck ??= at;
      return false;
    },
    getOwnPropertyDescriptor(target, key) {
      if (typeof key === 'string' && !Object.hasOwn(target, key) && tracking.filled.has(`${pointer}/${escapePointer(key)}`)) {
        return { value: FILLER, writable: false, enumerable: false, configurable: true };
      }
      return Reflect.getOwnPropertyDescriptor(target, key);
    },
    get(target, key) {
      if (++tracking.steps > TEMPLATE_LIMITS.renderSteps) throw new RenderBudgetExceeded();
      // Once a check failed, what is read is strict mode wording its error: nothing to learn.
      const learning = tracking.failedCheck === undefined;
      if (key === Symbol.toPrimitive) {
        const printed = tracking.printed.push({ pointer, is: Array.isArray(target) ? 'a list' : 'an object' }) - 1;
        return () => marker(tracking.nonce, printed);
      }
      if (typeof key === 'string' && !Object.hasOwn(target, key)) {
        const at = `${pointer}/${escapePointer(key)}`;
        if (tracking.filled.has(at)) return FILLER;
        // Strict mode checks only a path's last name (`in`, the `has` trap above); a name before
        // it is read plainly, and the lookup after it fails on undefined: this miss is the cause.
        // (Not the inherited names JavaScript itself reads, such as toString when printing.)
        if (learning && !(key in target)) [tracking.readMiss, tracking.scalar] = [at, undefined];
      }
      if (typeof key !== 'string' || !Object.hasOwn(target, key)) return Reflect.get(target, key);
      const found: unknown = Reflect.get(target, key);
      const at = `${pointer}/${escapePointer(key)}`;
      const isObject = typeof found === 'object' && found !== null;
      if (learning) {
        // A name that is there: a miss read before it (a non-strict read, {{#if b}}) threw nothing.
        tracking.readMiss = undefined;
        tracking.scalar = isObject ? undefined : { pointer: at, is: found === null ? 'null' : typeof found, text: String(found) };
      }
      return isObject ? watch(found, at, tracking) : found;
    },
  });
}

/** Strict mode's own words for a name looked up in a falsy value (`"d" not defined in null - 1:5`): the value as text. */
const NOT_DEFINED_IN = /^"[\s\S]*?" not defined in ([\s\S]*?)(?: - \d+:\d+)?$/;

/**
 * Whether `error` is the lookup of a name in `scalar`, the value read just before: strict mode's
 * words for a falsy one (null, false, 0, ""), JavaScript's `in` refusing a truthy string, number or
 * boolean. Anything else (a `../` past the top) is not blamed on that variable.
 */
export function isLookupIn(scalar: NonNullable<Tracking['scalar']>, error: unknown): boolean {
  const message = (error as Error | undefined)?.message ?? '';
  if (error instanceof TypeError) return message.startsWith("Cannot use 'in' operator");
  return NOT_DEFINED_IN.exec(message)?.[1] === scalar.text;
}
