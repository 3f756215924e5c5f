/**
 * The page's files, read once per instance. In Lambda they sit in `assets/` beside the bundle
 * (the stack copies them there, see SETTINGS_PAGE_BUNDLING in infra/aws/send-bundle.ts); locally, beside this file,
 * with the OpenID client library read from node_modules. Same names, same bytes either way.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Asset {
  readonly type: string;
  readonly body: Buffer;
}

/** The OpenID Connect client the page uses: oidc-client-ts's own browser build (not in its `exports`, so found from its package.json). */
export const VENDOR_PACKAGE = 'oidc-client-ts';
export const VENDOR_FILE = 'dist/browser/oidc-client-ts.min.js';

/** Path below `/settings/` → file below `assets/`, and its media type. */
export const ASSET_FILES: Readonly<Record<string, { readonly file: string; readonly type: string }>> = {
  '': { file: 'index.html', type: 'text/html; charset=utf-8' },
  'app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  'page.js': { file: 'page.js', type: 'text/javascript; charset=utf-8' },
  'session.js': { file: 'session.js', type: 'text/javascript; charset=utf-8' },
  'schedules.js': { file: 'schedules.js', type: 'text/javascript; charset=utf-8' },
  'templates.js': { file: 'templates.js', type: 'text/javascript; charset=utf-8' },
  'style.css': { file: 'style.css', type: 'text/css; charset=utf-8' },
  'oidc-client-ts.min.js': { file: 'vendor/oidc-client-ts.min.js', type: 'text/javascript; charset=utf-8' },
};

function locate(file: string): string {
  const beside = fileURLToPath(new URL(`./assets/${file}`, import.meta.url));
  if (existsSync(beside)) return beside;
  if (file.startsWith('vendor/')) return join(dirname(createRequire(import.meta.url).resolve(`${VENDOR_PACKAGE}/package.json`)), VENDOR_FILE);
  throw new Error(`settings page file missing: assets/${file}`);
}

export function loadAssets(): ReadonlyMap<string, Asset> {
  return new Map(
    Object.entries(ASSET_FILES).map(([path, { file, type }]) => {
      let body = readFileSync(locate(file));
      // The library's source map is not shipped; without this line a browser's developer tools
      // would ask for it and log a 404.
      if (file.startsWith('vendor/')) body = Buffer.from(body.toString('utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n'));
      return [path, { type, body }];
    }),
  );
}
