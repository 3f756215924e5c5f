/**
 * How the functions are bundled, in one place: the stack hands these options to `NodejsFunction`
 * (every function then split by `splitBundling`; the settings page's has its own assets step), and
 * the bundle test and the bench hand the same ones to esbuild directly.
 */
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Runtime } from 'aws-cdk-lib/aws-lambda';
import type { BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { middyWebStreamsOnFirstUse } from './middy-web-streams';
import { endpointCacheLruBuild } from './endpoint-cache-lru-build';
import { buildWithOneStartupChunk } from './startup-chunk';
import { validatorEsBuild } from './validator-es-build';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const SEND_ENTRY = fileURLToPath(new URL('../../functions/send/index.ts', import.meta.url));
export const LOCK_FILE = fileURLToPath(new URL('../../package-lock.json', import.meta.url));

/** The newest Node.js Lambda runtime this aws-cdk-lib knows (cdk-nag AwsSolutions-L1 holds us to it). */
export const SEND_RUNTIME = Runtime.NODEJS_24_X;
export const ESBUILD_TARGET = 'node24';

/**
 * ESM output has no `require`, but bundled CommonJS dependencies call it for Node built-ins
 * (libmime and its libbase64, libqp and iconv-lite need `buffer`, `stream`, `string_decoder`).
 * esbuild's shim forwards to a `require` in scope and otherwise throws "Dynamic require of
 * node:buffer is not supported" the first time a non-ASCII display name is encoded. The alias is
 * long so it cannot collide with a minified identifier.
 */
export const CJS_REQUIRE_BANNER =
  "import { createRequire as __bannerCreateRequire } from 'node:module'; const require = __bannerCreateRequire(import.meta.url);";

/** esbuild picks the ESM build of dependencies that ship one (`module`), for better tree-shaking. */
export const MAIN_FIELDS = ['module', 'main'];

export const SEND_BUNDLING: BundlingOptions = {
  format: OutputFormat.ESM,
  target: ESBUILD_TARGET,
  minify: true,
  sourceMap: true,
  // Stack traces need the mappings only; the embedded sources would double the asset for nothing.
  sourcesContent: false,
  mainFields: MAIN_FIELDS,
  banner: CJS_REQUIRE_BANNER,
  // Bundle the SDK instead of using the runtime's copy: the versions pinned in package-lock.json
  // are the ones tested, and the SES error mapping's `instanceof` checks need the single copy
  // that `@smithy/node-http-handler` and the clients were built against.
  bundleAwsSDK: true,
};

/**
 * A function's esbuild options: those `NodejsFunction` derives from `SEND_BUNDLING`, plus ESM
 * code splitting into `outdir` (`index.mjs` and `chunks/`). Without splitting, a dynamic
 * `import()` is inlined into the one file and only its evaluation waits, and the modules it
 * imports statically become static imports of the whole file: Node's `http` among them (the SDK's
 * credential providers import it), which on Node 22 and later loads undici, Node's fetch, at
 * every cold start. With it, what most invocations never use (raw MIME composition, the
 * scheduling and queue clients, the tracer when off, the SDK's other credential providers) is not
 * even read at cold start. `NodejsFunction` always passes `--outfile`, which esbuild refuses
 * beside splitting, so the stack rebuilds each function this way after it (`splitBundling`).
 */
export function splitEsbuildOptions(entry: string, outdir: string) {
  return {
    entryPoints: [entry] as [string],
    absWorkingDir: REPO_ROOT,
    outdir,
    splitting: true,
    entryNames: 'index',
    chunkNames: 'chunks/[name]-[hash]',
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node' as const,
    format: 'esm' as const,
    target: ESBUILD_TARGET,
    minify: true,
    sourcemap: true,
    sourcesContent: false,
    mainFields: MAIN_FIELDS,
    banner: { js: CJS_REQUIRE_BANNER },
    // Middy's web streams load with the first streamed response, never one of ours (middy-web-streams.ts);
    // validator is bundled from its ES module build (validator-es-build.ts); the DynamoDB client's
    // endpoint cache gets an ES module in place of mnemonist's CommonJS LRUCache (endpoint-cache-lru-build.ts).
    plugins: [middyWebStreamsOnFirstUse, validatorEsBuild, endpointCacheLruBuild],
    logLevel: 'warning' as const,
  };
}

/** The send function's esbuild options, for a build of a part of it with the same settings (the bundle tests). */
export const sendEsbuildOptions = (outdir: string) => splitEsbuildOptions(SEND_ENTRY, outdir);

/**
 * A function's asset as the stack deploys it: the split build, with all that a cold start reads
 * in the entry and one chunk (infra/aws/startup-chunk.ts).
 */
export const buildFunction = (entry: string, outdir: string) => buildWithOneStartupChunk(splitEsbuildOptions(entry, outdir));

/** `SEND_BUNDLING`, then the split build of infra/aws/split-bundle.ts over its output. */
export function splitBundling(entry: string): BundlingOptions {
  const fromRoot = relative(REPO_ROOT, entry);
  return {
    ...SEND_BUNDLING,
    commandHooks: {
      beforeBundling: () => [],
      beforeInstall: () => [],
      afterBundling: (inputDir: string, outputDir: string) => [`cd "${inputDir}" && node --import tsx infra/aws/split-bundle.ts "${fromRoot}" "${outputDir}"`],
    },
  };
}

export const SEND_SPLIT_BUNDLING: BundlingOptions = splitBundling(SEND_ENTRY);

export const ME_ENTRY = fileURLToPath(new URL('../../functions/me/index.ts', import.meta.url));
export const SETTINGS_PAGE_ENTRY = fileURLToPath(new URL('../../functions/settings-page/index.ts', import.meta.url));
export const EVENTS_ENTRY = fileURLToPath(new URL('../../functions/events/index.ts', import.meta.url));
export const WEBHOOKS_ENTRY = fileURLToPath(new URL('../../functions/webhooks/index.ts', import.meta.url));
export const STATUS_ENTRY = fileURLToPath(new URL('../../functions/status/index.ts', import.meta.url));
export const SCHEDULED_ENTRY = fileURLToPath(new URL('../../functions/scheduled/index.ts', import.meta.url));
export const TEMPLATES_ENTRY = fileURLToPath(new URL('../../functions/templates/index.ts', import.meta.url));
export const CANCEL_ENTRY = fileURLToPath(new URL('../../functions/cancel/index.ts', import.meta.url));

/**
 * The settings page's files go beside its bundle, where `functions/settings-page/assets.ts`
 * looks for them in Lambda: the page's own, and oidc-client-ts's browser build.
 */
export const SETTINGS_PAGE_BUNDLING: BundlingOptions = {
  ...SEND_BUNDLING,
  commandHooks: {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (inputDir: string, outputDir: string) => [
      `mkdir -p "${outputDir}/assets/vendor"`,
      `cp "${inputDir}/functions/settings-page/assets/index.html" "${inputDir}/functions/settings-page/assets/app.js" "${inputDir}/functions/settings-page/assets/page.js" "${inputDir}/functions/settings-page/assets/session.js" "${inputDir}/functions/settings-page/assets/schedules.js" "${inputDir}/functions/settings-page/assets/templates.js" "${inputDir}/functions/settings-page/assets/style.css" "${outputDir}/assets/"`,
      `cp "${inputDir}/node_modules/oidc-client-ts/dist/browser/oidc-client-ts.min.js" "${outputDir}/assets/vendor/"`,
    ],
  },
};
