/**
 * Error stacks in the logs that name our source lines, mapped when an error is logged instead of
 * at every cold start. Node's own `--enable-source-maps` reads, parses and measures the map of
 * every file a function imports, at import: about a fifth of a cold start, for stacks that almost
 * no invocation prints (docs/performance.md, "Source maps read when an error is logged"). Here a
 * bundle file's map is read the first time a logged stack passes through that file, and kept for
 * the life of the instance.
 */
import { readFileSync } from 'node:fs';
import type { SourceMapPayload } from 'node:module';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

/** A location in a bundle file, as V8 prints it in a stack frame: `file:///var/task/chunks/chunk-X.mjs:1:2345`. */
const BUNDLE_LOCATION = /(file:\/\/\/[^\s()]+?\.mjs):(\d+):(\d+)/g;

/** Each bundle file's map (written beside it, `<file>.map`, as the build writes them); null: it has none. */
const maps = new Map<string, SourceMap | null>();

function mapOf(fileUrl: string): SourceMap | null {
  let map = maps.get(fileUrl);
  if (map === undefined) {
    try {
      map = new SourceMap(JSON.parse(readFileSync(`${fileURLToPath(fileUrl)}.map`, 'utf8')) as SourceMapPayload);
    } catch {
      map = null;
    }
    maps.set(fileUrl, map);
  }
  return map;
}

/**
 * The stack with each location in a bundle file that has a map replaced by the source location
 * it was built from; every other line as it was.
 */
export function sourceMappedStack(stack: string): string {
  return stack.replace(BUNDLE_LOCATION, (location: string, fileUrl: string, line: string, column: string) => {
    const entry = mapOf(fileUrl)?.findEntry(Number(line) - 1, Number(column) - 1);
    if (!entry || !('originalSource' in entry)) return location;
    // A map names its sources relative to itself, and it lies beside the file.
    return `${new URL(entry.originalSource, fileUrl).href}:${entry.originalLine + 1}:${entry.originalColumn + 1}`;
  });
}

/**
 * Whether a proxy may answer `key` with a value of its own: not when the target holds it as a
 * non-writable, non-configurable value (a frozen error's stack on Node 20), which a proxy must
 * report as it is.
 */
function overridable(target: object, key: PropertyKey): boolean {
  const own = Reflect.getOwnPropertyDescriptor(target, key);
  return own === undefined || own.configurable === true || !('value' in own) || own.writable === true;
}

/**
 * The error as the logger should see it: its stack (and its cause's) source-mapped, everything
 * else read from the error itself, so the logger formats it as it would the error (its name,
 * message and fields, getters such as a `DOMException`'s included). The error the caller holds
 * stays as it was thrown.
 */
function withSourceMappedStack(error: Error): Error {
  const stack = typeof error.stack === 'string' ? sourceMappedStack(error.stack) : error.stack;
  const cause = error.cause instanceof Error ? withSourceMappedStack(error.cause) : error.cause;
  return new Proxy(error, {
    get(target, key) {
      if (key === 'stack' && overridable(target, key)) return stack;
      if (key === 'cause' && overridable(target, key)) return cause;
      return Reflect.get(target, key);
    },
  });
}

/**
 * The logger's JSON replacer (`jsonReplacerFn`): every error it writes, with its stack
 * source-mapped. A stack that cannot be mapped is written as it is: logging never fails for it.
 */
export function sourceMappedErrors(_key: string, value: unknown): unknown {
  if (!(value instanceof Error)) return value;
  try {
    return withSourceMappedStack(value);
  } catch {
    return value;
  }
}
