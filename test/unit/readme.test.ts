/**
 * The README stays a front page a newcomer reads in five minutes, and every topic page is one
 * click from it. (That each link resolves is `npm run lint:docs`; that its quick start works as
 * written is test/local/start-cli.test.ts.)
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';

const ROOT = new URL('../../', import.meta.url);
const readme = readFileSync(new URL('README.md', ROOT), 'utf8');

describe('README.md', () => {
  it('is at most 300 lines', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
  });

  it('names every setting that docs/configuration.md and docs/local.md describe', () => {
    const described = ['docs/configuration.md', 'docs/local.md'].flatMap((page) => {
      const text = readFileSync(new URL(page, ROOT), 'utf8');
      // The first cell of each table row: one or more backticked names.
      return [...text.matchAll(/^\| ((?:`[A-Z][A-Z0-9_]+`(?:, )?)+) \|/gm)].flatMap(([, cell]) => [...cell!.matchAll(/`([A-Z0-9_]+)`/g)].map(([, name]) => name!));
    });
    expect(described.length).toBeGreaterThan(40);
    expect([...new Set(described)].filter((name) => !readme.includes(`\`${name}\``))).toEqual([]);
  });

  it('links every page in docs/', () => {
    const pages = readdirSync(new URL('docs/', ROOT)).filter((name) => name.endsWith('.md'));
    expect(pages.length).toBeGreaterThan(10);
    const linked = new Set([...readme.matchAll(/\]\(docs\/([^)#]+\.md)(?:#[^)]*)?\)/g)].map(([, page]) => page));
    expect(pages.filter((page) => !linked.has(page))).toEqual([]);
  });
});
