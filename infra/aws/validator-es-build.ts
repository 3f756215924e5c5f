/**
 * An esbuild plugin for every split function build (`splitEsbuildOptions`): `validator/lib/…`, the
 * CommonJS build the code imports (Node and Jest load it as it is), is bundled from `validator/es/lib/…`,
 * the ES module build of the same source that the package ships beside it.
 *
 * esbuild wraps each CommonJS module in a function that runs when the module is first required, so
 * V8 parses its code twice at a cold start: once when the chunk is compiled, once when the wrapper
 * runs. The ES build is hoisted into the chunk's top level like the rest of the code, parsed once,
 * and 1.5 KiB smaller. The email checks are needed by every send, so this is 0.3 ms of every cold
 * start on Node 20 and 24 (docs/performance.md, "Cold start"). Its extensionless imports are for
 * bundlers only, which is why the source keeps importing the CommonJS build.
 */
import type { Plugin } from 'esbuild';

const VALIDATOR_LIB = /^validator\/lib\/(.+)$/;

export const validatorEsBuild: Plugin = {
  name: 'validator-es-build',
  setup(build) {
    build.onResolve({ filter: VALIDATOR_LIB }, (args) =>
      build.resolve(`validator/es/lib/${VALIDATOR_LIB.exec(args.path)![1]}`, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer }),
    );
  },
};
