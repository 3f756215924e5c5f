import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { build } from 'esbuild';
import { buildWithOneStartupChunk, startupOutputs } from '../../infra/aws/startup-chunk';

/**
 * A small app shaped like a function: an entry with a top-level await that loads a module lazily,
 * code the entry and the lazily loaded modules share, an ES module and a CommonJS one loaded on
 * demand (named and default exports), and two lazily loaded modules that share code of their own.
 */
const APP: Record<string, string> = {
  'index.ts': `
    import { makeHandler } from './handler';
    import { settings } from './settings';
    const tracer = await import('./tracer');
    export const handler = makeHandler(settings(), tracer.tag);`,
  'settings.ts': `export const settings = () => ({ region: 'eu-west-1' });`,
  'handler.ts': `
    import { Shared, counter } from './shared';
    export function makeHandler(settings: { region: string }, tag: string) {
      return async (kind: string) => {
        if (kind === 'esm') { const m = await import('./lazy-esm'); return m.describe(new Shared('esm')) + ',' + m.default; }
        if (kind === 'cjs') { const m = await import('./lazy-cjs.cjs'); return m.default.shout(settings.region); }
        if (kind === 'other') { const m = await import('./lazy-other'); return m.other(); }
        return tag + ':' + counter.next();
      };
    }`,
  'shared.ts': `
    export class Shared { constructor(readonly name: string) {} }
    let count = 0;
    export const counter = { next: () => ++count };`,
  'tracer.ts': `import { counter } from './shared'; export const tag = 'traced' + counter.next();`,
  'lazy-esm.ts': `
    import { Shared, counter } from './shared';
    import { both } from './lazy-both';
    export default 'default-of-esm';
    export function describe(value: unknown) { return [value instanceof Shared, counter.next(), both()].join(','); }`,
  'lazy-other.ts': `import { both } from './lazy-both'; import { counter } from './shared'; export const other = () => both() + counter.next();`,
  'lazy-both.ts': `export const both = () => 'both';`,
  'lazy-cjs.cjs': `module.exports = { shout: (text) => text.toUpperCase() };`,
};

const OPTIONS = {
  bundle: true,
  splitting: true,
  format: 'esm' as const,
  platform: 'node' as const,
  target: 'node20',
  entryNames: 'index',
  chunkNames: 'chunks/[name]-[hash]',
  outExtension: { '.js': '.mjs' },
  logLevel: 'silent' as const,
};

function writeTree(root: string, files: Record<string, string>): void {
  for (const [path, contents] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), contents);
  }
}

/** Imports the built entry in a fresh Node and calls its handler with each kind, in order. */
function run(outdir: string, kinds: string[]): string[] {
  const script = `const { handler } = await import(${JSON.stringify(pathToFileURL(join(outdir, 'index.mjs')).href)}); const out = []; for (const kind of ${JSON.stringify(kinds)}) out.push(await handler(kind)); console.log(JSON.stringify(out));`;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 }));
}

describe('buildWithOneStartupChunk', () => {
  let root: string;

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'startup-chunk-'));
    writeTree(join(root, 'app'), APP);
  });

  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('leaves a cold start two files where esbuild alone made more, and loads nothing lazy at start-up', async () => {
    const plain = await build({ ...OPTIONS, absWorkingDir: root, entryPoints: ['app/index.ts'], outdir: join(root, 'plain'), metafile: true });
    const merged = await buildWithOneStartupChunk({ ...OPTIONS, absWorkingDir: root, entryPoints: ['app/index.ts'], outdir: join(root, 'merged') });
    // esbuild alone: the shared module and the settings each in a start-up chunk of their own.
    expect(startupOutputs(plain.metafile).length).toBeGreaterThan(2);
    const startup = startupOutputs(merged.metafile);
    expect(startup).toHaveLength(2);
    const readAtStart = startup.flatMap((output) => Object.keys(merged.metafile.outputs[output]!.inputs));
    expect(readAtStart.some((input) => input.endsWith('lazy-esm.ts') || input.endsWith('lazy-cjs.cjs') || input.endsWith('lazy-both.ts'))).toBe(false);
    expect(readAtStart.filter((input) => input.endsWith('shared.ts'))).toHaveLength(1);
  });

  it('keeps one instance of every shared module, whichever chunk asks, and passes default and CommonJS exports on', async () => {
    const outdir = join(root, 'run');
    await buildWithOneStartupChunk({ ...OPTIONS, absWorkingDir: root, entryPoints: ['app/index.ts'], outdir });
    // The tracer, loaded by the entry's top-level await, counted 1; every later count continues it.
    expect(run(outdir, ['plain', 'esm', 'cjs', 'other', 'plain'])).toEqual(['traced1:2', 'true,3,both,default-of-esm', 'EU-WEST-1', 'both4', 'traced1:5']);
  });

  it('refuses a build whose entry imports a side-effect-free package directly, instead of leaving the files apart', async () => {
    const dir = join(root, 'pure');
    writeTree(dir, {
      'node_modules/pure-lib/package.json': JSON.stringify({ name: 'pure-lib', version: '1.0.0', type: 'module', main: 'index.js', sideEffects: false }),
      'node_modules/pure-lib/index.js': `export * from './client.js';`,
      'node_modules/pure-lib/client.js': `import { sign } from './sign.js'; import { encode } from './encode.js'; export class Client { send(kind) { return kind === 'a' ? import('./a.js') : import('./b.js'); } stamp() { return sign() + encode(); } }`,
      'node_modules/pure-lib/sign.js': `export const sign = () => 'signed';`,
      'node_modules/pure-lib/encode.js': `export const encode = () => 'encoded';`,
      'node_modules/pure-lib/a.js': `import { sign } from './sign.js'; export const a = () => sign();`,
      'node_modules/pure-lib/b.js': `import { encode } from './encode.js'; export const b = () => encode();`,
      'index.ts': `import { Client } from 'pure-lib'; const client = new Client(); export const handler = (kind) => client.send(kind);`,
    });
    await expect(buildWithOneStartupChunk({ ...OPTIONS, absWorkingDir: dir, entryPoints: ['index.ts'], outdir: join(dir, 'out') })).rejects.toThrow(
      /would read 3 files, not the entry and one chunk/,
    );
  });
});
