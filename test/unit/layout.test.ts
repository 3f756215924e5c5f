/**
 * The size rule of what ships and runs (functions/, infra/, bench/): no source file over 300
 * lines, the settings page's scripts and styles included. A file that grows past it has become
 * two things; split it where its parts stop needing each other.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const MAX_LINES = 300;
const SOURCE = /\.(ts|js|mjs|css|html)$/;

function sourceFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' || name === 'cdk.out' ? [] : sourceFiles(path);
    return SOURCE.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

const lineCount = (path: string) => readFileSync(path, 'utf8').replace(/\n$/, '').split('\n').length;

describe('the source files of functions/, infra/ and bench/', () => {
  const files = ['functions', 'infra', 'bench'].flatMap((folder) => sourceFiles(join(ROOT, folder)));

  it('are found, the settings page\'s scripts among them', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files.map((file) => relative(ROOT, file))).toEqual(expect.arrayContaining(['functions/send/handler.ts', 'functions/settings-page/assets/app.js']));
  });

  it(`are at most ${MAX_LINES} lines each`, () => {
    const over = files.filter((file) => lineCount(file) > MAX_LINES).map((file) => `${relative(ROOT, file)}: ${lineCount(file)} lines`);
    expect(over).toEqual([]);
  });
});
