/**
 * A remark lint rule (run by `npm run lint:docs` through .remarkrc.json): a `code span` that names
 * a path in this repository must name one that exists, so no page sends a reader to a file the
 * repository does not hold.
 *
 * What counts as a repository path: a span without spaces or placeholders (`<…>`, `*`, `{`, `$`,
 * `…`) whose first segment is a top-level entry of the repository (`functions/send/handler.ts`,
 * `infra/aws/`), or a bare `NAME.md`, which can only mean a page at the root or in docs/. Media
 * types (`application/json`) and example file names (`invoice.pdf`) are neither, so they are left
 * alone. Paths under what .gitignore names (`.local/demo.json`, `cdk.out/`) are made at run time
 * and are allowed; so is a path relative to the page itself.
 *
 * The same holds for prose: the project's contract and specification are not files of this
 * repository, so a page that cites them ("CONTRACT section 8", "SPEC") sends the reader nowhere;
 * it must state the rule itself.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const ROOT = join(dirname(new URL(import.meta.url).pathname), '..', '..');
const PATH = /^\.?[A-Za-z0-9_-][\w.@+-]*(\/[\w.@+-]+)*\/?$/;
const TOP_LEVEL = new Set(readdirSync(ROOT).filter((name) => name !== '.git' && name !== 'node_modules'));

/** The .gitignore patterns, as tests: `dir/` (a folder anywhere below the root), `*.ext`, or an exact path. */
const ignored = readFileSync(join(ROOT, '.gitignore'), 'utf8')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line && !line.startsWith('#'))
  .map((pattern) => {
    if (pattern.startsWith('*')) return (path) => path.endsWith(pattern.slice(1));
    if (pattern.endsWith('/')) return (path) => `${path}/`.startsWith(pattern);
    return (path) => path === pattern;
  });

/** Whether a span names a repository path this rule checks. */
export function isRepositoryPath(text) {
  if (!PATH.test(text) || text.includes('..')) return false;
  const [first] = text.split('/');
  if (text.includes('/')) return TOP_LEVEL.has(first) || ignored.some((test) => test(text));
  return /^[\w.-]+\.md$/.test(text);
}

/** Whether the path exists (from the root, beside the page, or as a page in docs/), or is made at run time. */
export function pathExists(text, pageDir) {
  const path = text.replace(/\/$/, '');
  if (ignored.some((test) => test(path))) return true;
  return [join(ROOT, path), join(pageDir, path), join(ROOT, 'docs', path)].some((candidate) => existsSync(candidate));
}

/** A citation of a document outside the repository, in running text. */
const OUTSIDE_DOCUMENT = /\b(CONTRACT|SPEC)(\.md)?\b/;

function visit(node, found) {
  if (node.type === 'inlineCode' || node.type === 'text') found(node);
  for (const child of node.children ?? []) visit(child, found);
}

export default function remarkRepositoryPaths() {
  return (tree, file) => {
    const pageDir = dirname(join(file.cwd ?? ROOT, file.path ?? ''));
    visit(tree, (node) => {
      if (node.type === 'text') {
        const cited = OUTSIDE_DOCUMENT.exec(node.value);
        if (cited) file.message(`"${cited[0]}" cites a document the repository does not hold; state the rule here instead`, node).fatal = true;
        return;
      }
      const text = node.value.trim();
      if (!isRepositoryPath(text) || pathExists(text, pageDir)) return;
      const message = file.message(`\`${text}\` names a path the repository does not hold (from ${relative(ROOT, pageDir) || '.'})`, node);
      message.fatal = true;
    });
  };
}
