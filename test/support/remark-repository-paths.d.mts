/** Types of the lint:docs rule in remark-repository-paths.mjs (plain JavaScript, so remark-cli loads it as is). */
import type { Root } from 'mdast';
import type { VFile } from 'vfile';

export function isRepositoryPath(text: string): boolean;
export function pathExists(text: string, pageDir: string): boolean;
export default function remarkRepositoryPaths(): (tree: Root, file: VFile) => void;
