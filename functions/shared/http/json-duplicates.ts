/**
 * Scans of JSON text that JSON.parse cannot do: nesting depth, and the JSON pointers of object
 * keys that appear twice in the same object. JSON.parse keeps the last
 * one silently, which would drop content (a first `To`, a first `OrganizationId`); the service
 * refuses such a body instead. The text must already have parsed as JSON.
 */
import { escapePointer } from './json-pointer';

type Frame =
  | { kind: 'object'; path: string; keys: Set<string>; key: string | undefined; expectKey: boolean }
  | { kind: 'array'; path: string; index: number };

/** The first `limit` duplicate keys' pointers, and how many there are in all. */
export interface DuplicateKeys {
  readonly pointers: string[];
  readonly total: number;
}

export function duplicateKeyPointers(text: string, limit = 100): DuplicateKeys {
  const pointers: string[] = [];
  // Every duplicate is counted, as every problem list counts all it found; only `limit` are kept.
  let total = 0;
  const stack: Frame[] = [];
  const childPath = (): string => {
    const parent = stack[stack.length - 1];
    if (!parent) return '';
    return parent.kind === 'object' ? `${parent.path}/${escapePointer(parent.key ?? '')}` : `${parent.path}/${parent.index}`;
  };

  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '"') {
      const start = i;
      // Jump to the closing quote: one preceded by an even number of backslashes.
      for (i = text.indexOf('"', i + 1); ; i = text.indexOf('"', i + 1)) {
        let slashes = 0;
        while (text[i - 1 - slashes] === '\\') slashes++;
        if (slashes % 2 === 0) break;
      }
      const top = stack[stack.length - 1];
      if (top?.kind === 'object' && top.expectKey) {
        const key = JSON.parse(text.slice(start, i + 1)) as string;
        if (top.keys.has(key) && total++ < limit) pointers.push(`${top.path}/${escapePointer(key)}`);
        top.keys.add(key);
        top.key = key;
        top.expectKey = false;
      }
    } else if (char === '{') {
      stack.push({ kind: 'object', path: childPath(), keys: new Set(), key: undefined, expectKey: true });
    } else if (char === '[') {
      stack.push({ kind: 'array', path: childPath(), index: 0 });
    } else if (char === '}' || char === ']') {
      stack.pop();
    } else if (char === ',') {
      const top = stack[stack.length - 1];
      if (top?.kind === 'object') top.expectKey = true;
      else if (top?.kind === 'array') top.index++;
    }
  }
  return { pointers, total };
}

/** True when arrays and objects nest deeper than `limit` (the text must already have parsed as JSON). */
export function exceedsNesting(text: string, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (char === 0x22) {
      // Skip the string: to the closing quote, one preceded by an even number of backslashes.
      for (i = text.indexOf('"', i + 1); ; i = text.indexOf('"', i + 1)) {
        let slashes = 0;
        while (text.charCodeAt(i - 1 - slashes) === 0x5c) slashes++;
        if (slashes % 2 === 0) break;
      }
    } else if (char === 0x7b || char === 0x5b) {
      if (++depth > limit) return true;
    } else if (char === 0x7d || char === 0x5d) {
      depth--;
    }
  }
  return false;
}
