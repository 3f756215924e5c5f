/**
 * The lint:docs rule that a page names only files the repository holds
 * (test/support/remark-repository-paths.mjs), run on small pages.
 */
import { describe, expect, it } from '@jest/globals';
import { remark } from 'remark';
import remarkRepositoryPaths from '../support/remark-repository-paths.mjs';

async function problems(markdown: string): Promise<string[]> {
  const file = await remark().use(remarkRepositoryPaths).process({ value: markdown, path: 'docs/page.md', cwd: process.cwd() });
  return file.messages.map((message) => message.reason);
}

describe('remark-repository-paths', () => {
  it('passes paths that exist, from the root, as docs pages or beside the page, and what .gitignore says is made at run time', async () => {
    expect(await problems('See `functions/send/handler.ts`, `infra/aws/`, `README.md`, `api.md`, `settings-page.png` and `.local/demo.json`.')).toEqual([]);
  });

  it('leaves media types, example file names, placeholders and commands alone', async () => {
    expect(await problems('`application/json`, `image/png`, `invoice.pdf`, `functions/<fn>/`, `test/*`, `npm run lint:docs`, `$BASE_URL/v1.2`.')).toEqual([]);
  });

  it('fails a path the repository does not hold, and a bare page name that is nowhere', async () => {
    expect(await problems('Read `infra/stack.ts` and `CONTRACT.md`.')).toEqual([
      expect.stringContaining('`infra/stack.ts` names a path the repository does not hold'),
      expect.stringContaining('`CONTRACT.md` names a path the repository does not hold'),
    ]);
  });

  it('fails a citation of the contract or the specification in running text, not a word that merely starts alike', async () => {
    expect(await problems('As CONTRACT section 8 says, and SPEC too.')).toHaveLength(1);
    expect(await problems('It requires `dynamodb:Select` = SPECIFIC_ATTRIBUTES.')).toEqual([]);
  });
});
