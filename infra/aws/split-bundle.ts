/**
 * Rebuilds a function's asset as `buildFunction` builds it (ESM code splitting, all that a cold
 * start reads in the entry and one chunk), over the single file `NodejsFunction` wrote:
 * `node --import tsx infra/aws/split-bundle.ts <entry> <output directory>`, the entry relative to
 * the repository. The stack runs it as every function's after-bundling hook (`splitBundling`).
 */
import { rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import { buildFunction, REPO_ROOT } from './send-bundle';

const [entry, outdir] = process.argv.slice(2);
if (!entry || !outdir) throw new Error('usage: split-bundle.ts <entry> <output directory>');
await rm(`${outdir}/chunks`, { recursive: true, force: true });
await buildFunction(resolve(REPO_ROOT, entry), outdir);
