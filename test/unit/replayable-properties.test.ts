/**
 * Every fast-check property in the suites can be replayed: a file with properties draws no
 * randomness of its own (`Math.random()`) and samples only with a seed the property gave it, so a
 * failure prints a seed and path that reproduce and shrink it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';

const TESTS = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function testFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return testFiles(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

/** The lines of a file with properties that take randomness fast-check cannot replay. */
function unreplayable(source: string): string[] {
  if (!/\bfc\.(assert|property|asyncProperty)\(/.test(source)) return [];
  return source.split('\n').filter((line) => /Math\.random\(/.test(line) || (/\bfc\.sample\(/.test(line) && !/\bseed\b/.test(line)));
}

describe('fast-check properties', () => {
  it('finds the unreplayable kinds of randomness it looks for', () => {
    expect(unreplayable('fc.assert(fc.property(fc.nat(), (n) => n + Math.random() > 0));')).toHaveLength(1);
    expect(unreplayable("fc.assert(fc.property(fc.nat(), () => {\n  const [x] = fc.sample(fc.nat(), 1);\n}));")).toEqual(['  const [x] = fc.sample(fc.nat(), 1);']);
    expect(unreplayable("fc.assert(fc.property(fc.nat(), (seed) => {\n  fc.sample(fc.nat(), { seed, numRuns: 1 });\n}));")).toEqual([]);
    // Outside a property file, a random e-mail address is nobody's business here.
    expect(unreplayable('const address = `${Math.random()}@example.net`;')).toEqual([]);
  });

  it('draw all their randomness from fast-check, in every test file', () => {
    const self = fileURLToPath(import.meta.url);
    const offenders = testFiles(TESTS).filter((file) => file !== self).flatMap((file) => unreplayable(readFileSync(file, 'utf8')).map((line) => `${relative(TESTS, file)}: ${line.trim()}`));
    expect(offenders).toEqual([]);
  });
});
