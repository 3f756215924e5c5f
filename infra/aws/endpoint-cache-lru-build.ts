/**
 * An esbuild plugin for every split function build (`splitEsbuildOptions`): the DynamoDB client's
 * endpoint cache (`@aws-sdk/endpoint-cache`) gets `functions/shared/runtime/endpoint-cache-lru.ts`
 * where it imports mnemonist's `LRUCache`, and nothing else changes. mnemonist is CommonJS only,
 * which V8 parses twice at every cold start (esbuild wraps it in a function that runs when it is
 * first required); the stand-in is an ES module on a `Map`, parsed once: 0.4 to 0.6 ms of the send
 * function's cold start (docs/performance.md, "Cold start"). Only an import from the endpoint
 * cache is redirected, so a mnemonist that anything else imports is bundled as it is.
 */
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';

export const ENDPOINT_CACHE_LRU = fileURLToPath(new URL('../../functions/shared/runtime/endpoint-cache-lru.ts', import.meta.url));

const ENDPOINT_CACHE = /[\\/]node_modules[\\/]@aws-sdk[\\/]endpoint-cache[\\/]/;

export const endpointCacheLruBuild: Plugin = {
  name: 'endpoint-cache-lru',
  setup(build) {
    build.onResolve({ filter: /^mnemonist\/lru-cache(\.js)?$/ }, (args) => (ENDPOINT_CACHE.test(args.importer) ? { path: ENDPOINT_CACHE_LRU } : undefined));
  },
};
