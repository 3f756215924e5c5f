/**
 * An esbuild plugin for every split function build (`splitEsbuildOptions`: all functions but the
 * settings page's, which `NodejsFunction` builds as one file): @middy/core's import of
 * `node:stream/web` no longer loads Node's web streams at each cold start.
 *
 * @middy/core imports `ReadableStream` from `node:stream/web` for one check, `handlerBody instanceof
 * ReadableStream`, made only when a handler streams its response (`streamifyResponse`), which none
 * of ours does. Importing that module loads Node's web streams, 3 ms of a cold start on Node 20 and
 * 4 ms on Node 24 (docs/performance.md, "Middy's web streams"). The stand-in answers the same check
 * through the global `ReadableStream`, which Node loads on first use: the streams load with the first
 * check, if it ever comes. `test/infra/bundle.test.ts` checks that middy still uses the class for
 * nothing but that check.
 */
import type { Plugin } from 'esbuild';

const NAMESPACE = 'middy-web-streams';

/** `ReadableStream` for `instanceof` only, resolved when the first check is made. */
export const READABLE_STREAM_FOR_INSTANCEOF = 'export const ReadableStream = { [Symbol.hasInstance]: (value) => value instanceof globalThis.ReadableStream };';

const FROM_MIDDY_CORE = /[\\/]node_modules[\\/]@middy[\\/]core[\\/]/;

export const middyWebStreamsOnFirstUse: Plugin = {
  name: NAMESPACE,
  setup(plugins) {
    plugins.onResolve({ filter: /^node:stream\/web$/ }, (args) => (FROM_MIDDY_CORE.test(args.importer) ? { path: 'readable-stream', namespace: NAMESPACE } : undefined));
    plugins.onLoad({ filter: /.*/, namespace: NAMESPACE }, () => ({ contents: READABLE_STREAM_FOR_INSTANCEOF, loader: 'js' }));
  },
};
