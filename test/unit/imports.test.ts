/**
 * The shape of the import graph of what ships and runs (functions/, infra/, bench/): no import
 * circle, type-only imports included (a circle of types still ties two files into one unit), and
 * the admin CLI's frame (infra/admin/cli.ts) imported by its process entry only: command files
 * take what they share with it from command-frame.ts; shared code (functions/shared/) takes nothing
 * from a function's own folder (functions/<function>/), so what several functions hold has one
 * home every one of them can reach. Tests may import the unit they test.
 *
 * The graph is read with TypeScript's own pre-processor (every import, export-from and dynamic
 * import of a literal path), and relative specifiers are resolved as the bundler does here.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SOURCE_FOLDERS = ['functions', 'infra', 'bench'];

function sourceFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : sourceFiles(path);
    return /\.ts$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The repository file a relative specifier names (`./x`, `./x.js`, `./x/index`), or undefined. */
function resolveSpecifier(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(from), specifier);
  const candidates = [base, base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')];
  return candidates.find((candidate) => candidate.endsWith('.ts') && existsSync(candidate) && statSync(candidate).isFile());
}

/** Each file (relative to the repository) with the repository files it imports. */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles.map(({ fileName }) => resolveSpecifier(file, fileName)).filter((target): target is string => target !== undefined);
    graph.set(relative(ROOT, file), [...new Set(targets.map((target) => relative(ROOT, target)))]);
  }
  return graph;
}

/** The strongly connected components with more than one file, or a file importing itself (Tarjan). */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

const graph = importGraph(SOURCE_FOLDERS.flatMap((folder) => sourceFiles(join(ROOT, folder))));

describe('the import graph of functions/, infra/ and bench/', () => {
  it('is read: the entries import what they run', () => {
    expect(graph.size).toBeGreaterThan(50);
    expect(graph.get('infra/admin/admin.ts')).toEqual(['infra/local/closed-pipe.ts', 'infra/admin/cli.ts']);
    expect(graph.get('infra/admin/cli.ts')).toEqual(expect.arrayContaining(['infra/admin/command-frame.ts', 'infra/admin/user-commands.ts', 'infra/admin/lifecycle-commands.ts']));
  });

  it('has no import circle', () => {
    expect(circles(graph)).toEqual([]);
  });

  it('imports the admin CLI (infra/admin/cli.ts) only from its process entry', () => {
    const importers = [...graph].filter(([, targets]) => targets.includes('infra/admin/cli.ts')).map(([file]) => file);
    expect(importers).toEqual(['infra/admin/admin.ts']);
  });
});

/** Each import of a function's own folder made from functions/shared/, as `importer -> imported`. */
function sharedReachingIntoFunctions(edges: ReadonlyMap<string, readonly string[]>): string[] {
  const functionFolder = /^functions\/(?!shared\/)[^/]+\//;
  return [...edges].filter(([file]) => file.startsWith('functions/shared/'))
    .flatMap(([file, targets]) => targets.filter((target) => functionFolder.test(target)).map((target) => `${file} -> ${target}`));
}

describe('functions/shared/', () => {
  it('imports nothing from a function\'s own folder', () => {
    expect(graph.get('functions/shared/schedules/schedule-store.ts')).toContain('functions/shared/mail/valid-message.ts');
    expect(sharedReachingIntoFunctions(graph)).toEqual([]);
  });

  it('is told apart from the functions\' folders', () => {
    expect(sharedReachingIntoFunctions(new Map([
      ['functions/shared/schedules/a.ts', ['functions/send/validation.ts', 'functions/shared/mail/ports.ts']],
      ['functions/shared/b.ts', ['functions/settings-page/config.ts']],
      ['functions/send/c.ts', ['functions/shared/b.ts', 'functions/status/d.ts']],
    ]))).toEqual(['functions/shared/schedules/a.ts -> functions/send/validation.ts', 'functions/shared/b.ts -> functions/settings-page/config.ts']);
  });
});

describe('circles', () => {
  it('finds a circle of two, of three and a self-import, and nothing in a tree', () => {
    expect(circles(new Map([['a', ['b']], ['b', ['a']], ['c', ['a']]]))).toEqual([['a', 'b']]);
    expect(circles(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']]]))).toEqual([['a', 'b', 'c']]);
    expect(circles(new Map([['a', ['a']]]))).toEqual([['a']]);
    expect(circles(new Map([['a', ['b', 'c']], ['b', ['c']], ['c', []]]))).toEqual([]);
  });
});
