/**
 * Ports whose implementation is imported on first use, not at start-up: what most requests never
 * need (the scheduling and queue clients, test mode's mailer) then costs nothing in a cold start
 * (docs/performance.md, "Cold start"). With the send function's split build, `import()` of such a
 * module is a chunk of its own, read only when it is first called.
 */

/** `make` once, when first asked; a failure is not kept, so the next call tries again. */
export function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => (made ??= make().catch((error: unknown) => {
    made = undefined;
    throw error;
  }));
}

/**
 * What `make` gives, loaded by `load()` (once, as `once`), then read synchronously by `loaded()`,
 * undefined until then: for code that must stay synchronous (validation) and can be loaded ahead,
 * by the first request that will need it.
 */
export function loadedOnFirstUse<T>(make: () => Promise<T>): { readonly load: () => Promise<T>; readonly loaded: () => T | undefined } {
  let value: T | undefined;
  const load = once(async () => (value = await make()));
  return { load, loaded: () => value };
}

/** The methods of `T` that return a promise: the only ones a deferred port can forward. */
type AsyncMethods<T> = { [K in keyof T]: T[K] extends (...args: never[]) => Promise<unknown> ? K : never }[keyof T];

/**
 * A `T` whose every method (each named in `methods`, which the compiler holds to the whole of
 * `T`) awaits the real one, made by `make` on the first call.
 */
export function deferred<T extends object>(make: () => Promise<T>, methods: { readonly [K in keyof T]-?: K extends AsyncMethods<T> ? true : never }): T {
  const real = once(make);
  const port: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  for (const name of Object.keys(methods)) {
    port[name] = async (...args: unknown[]) => {
      const target = (await real()) as Record<string, (...args: unknown[]) => Promise<unknown>>;
      return target[name]!.apply(target, args);
    };
  }
  return port as T;
}
