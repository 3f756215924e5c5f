/**
 * Rebuilds the send function's asset with ESM code splitting (`sendEsbuildOptions`), over the
 * single file `NodejsFunction` wrote: `node --import tsx infra/aws/split-send-bundle.ts <dir>`.
 * The stack runs it as the send function's after-bundling hook (`SEND_SPLIT_BUNDLING`).
 */
import { rm } from 'node:fs/promises';
import { build } from 'esbuild';
import { sendEsbuildOptions } from './send-bundle';

const [outdir] = process.argv.slice(2);
if (!outdir) throw new Error('usage: split-send-bundle.ts <output directory>');
await rm(`${outdir}/chunks`, { recursive: true, force: true });
await build(sendEsbuildOptions(outdir));
