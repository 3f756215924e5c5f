/**
 * A function's split build, with all that a cold start reads in two files: `index.mjs` (the entry
 * module) and one chunk (every module it imports, transitively).
 *
 * esbuild puts each module into the chunk of the set of entry points that reach it, and with
 * splitting every module loaded by `import()` is an entry point. A module that the function's
 * entry and some lazily loaded modules both reach lands in a chunk of its own for each different
 * set of lazily loaded modules: the send function's cold start read 16 files, the SES-only bundle
 * 9, and Node spends about 0.7 to 1 ms on each ES module file it loads (resolve, read, compile,
 * its source map, link), whatever its size.
 *
 * So the build runs twice. The first pass says what the entry module imports statically. In the
 * second, every module loaded by `import()` is reached through a small wrapper that imports those
 * same modules first and then re-exports the module itself: every lazily loaded module now reaches
 * everything the entry reaches, so all of it has one set of entry points and one chunk. Nothing
 * is loaded earlier or twice: when a lazily loaded module is imported, that chunk has already
 * been evaluated (the entry imports it first), and the wrapper's imports of it cost nothing. The
 * wrappers import the entry's dependencies, not the entry: an entry whose top-level await loads
 * a module (the tracer, say) would otherwise wait for itself.
 *
 * A side-effect import of a package that declares `"sideEffects": false` is dropped by esbuild,
 * so an entry that imports such a package directly (rather than through a module of its own)
 * would not be merged: the build says so instead of quietly leaving the files apart.
 */
import { resolve } from 'node:path';
import type { BuildOptions, BuildResult, Metafile, Plugin } from 'esbuild';
import { build } from 'esbuild';

const WRAPPER = 'lazy-entry';

/** The entry's output and every output it imports statically: what a cold start reads. */
export function startupOutputs(metafile: Metafile): string[] {
  const entry = Object.keys(metafile.outputs).find((path) => path.endsWith('/index.mjs') || path === 'index.mjs');
  if (!entry) throw new Error('the build wrote no index.mjs');
  const seen = new Set<string>();
  const visit = (path: string) => {
    if (seen.has(path) || !metafile.outputs[path]) return;
    seen.add(path);
    for (const imported of metafile.outputs[path]!.imports) if (imported.kind === 'import-statement') visit(imported.path);
  };
  visit(entry);
  return [...seen];
}

/**
 * Routes every `import()` through a wrapper that imports `startup` (the entry's static imports,
 * absolute paths) before re-exporting the module. `exportsDefault`: whether a lazily loaded
 * module (absolute path) has a default export to pass on.
 */
function startupInOneChunk(startup: readonly string[], exportsDefault: (path: string) => boolean): Plugin {
  return {
    name: 'startup-in-one-chunk',
    setup(plugins) {
      plugins.onResolve({ filter: /.*/ }, async (args) => {
        if (args.kind !== 'dynamic-import' || args.pluginData === WRAPPER) return undefined;
        const resolved = await plugins.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: WRAPPER });
        // Node's built-ins and anything else left outside the bundle stay as they are.
        if (resolved.errors.length > 0 || resolved.external) return undefined;
        return { path: resolved.path, namespace: WRAPPER };
      });
      plugins.onLoad({ filter: /.*/, namespace: WRAPPER }, (args) => {
        const lazy = JSON.stringify(args.path);
        const lines = [
          ...startup.map((path) => `import ${JSON.stringify(path)};`),
          `export * from ${lazy};`,
          ...(exportsDefault(args.path) ? [`export { default } from ${lazy};`] : []),
        ];
        return { contents: lines.join('\n'), loader: 'js', resolveDir: resolve(args.path, '..') };
      });
    },
  };
}

/**
 * Builds `options` (a split ESM build of one entry point, with `absWorkingDir`) in two passes,
 * as the file's header says, and checks that a cold start reads at most two files.
 */
export async function buildWithOneStartupChunk(options: BuildOptions & { absWorkingDir: string; entryPoints: [string] }): Promise<BuildResult & { metafile: Metafile }> {
  const root = options.absWorkingDir;
  const entry = resolve(root, options.entryPoints[0]);
  // Only the metafile is read from the first pass, and minifying or mapping changes none of it.
  const first = await build({ ...options, write: false, metafile: true, minify: false, sourcemap: false });
  const entryInput = Object.entries(first.metafile.inputs).find(([path]) => resolve(root, path) === entry)?.[1];
  if (!entryInput) throw new Error(`the first pass did not read the entry ${entry}`);
  const startup = entryInput.imports.filter((i) => i.kind === 'import-statement' && !i.external).map((i) => resolve(root, i.path));
  const withDefault = new Set(
    Object.values(first.metafile.outputs)
      .filter((output) => output.entryPoint && output.exports.includes('default'))
      .map((output) => resolve(root, output.entryPoint!)),
  );
  const result = await build({ ...options, metafile: true, plugins: [...(options.plugins ?? []), startupInOneChunk(startup, (path) => withDefault.has(path))] });
  const read = startupOutputs(result.metafile);
  if (read.length > 2) {
    throw new Error(
      `a cold start of ${options.entryPoints[0]} would read ${read.length} files, not the entry and one chunk: ` +
        `import the entry's dependencies through modules of the project's own (a package that declares "sideEffects": false cannot be imported for its side effects): ${read.join(', ')}`,
    );
  }
  return result;
}
