import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { build } from 'esbuild';
import { Template } from 'aws-cdk-lib/assertions';
import { ENDPOINT_CACHE_LRU } from '../../infra/aws/endpoint-cache-lru-build';
import { READABLE_STREAM_FOR_INSTANCEOF } from '../../infra/aws/middy-web-streams';
import { CJS_REQUIRE_BANNER, REPO_ROOT, SEND_ENTRY, buildFunction, sendEsbuildOptions } from '../../infra/aws/send-bundle';
import { startupOutputs } from '../../infra/aws/startup-chunk';
import { buildStack } from './support';

/** Well above today's ~1.2 MB: a jump past it means a dependency slipped in by accident. */
const SIZE_BUDGET_BYTES = 3 * 1024 * 1024;

/**
 * Loads the bundle in a fresh Node process, as Lambda would (ESM, no Node options, no AWS
 * credentials), and calls the handler with requests the router answers before any AWS call.
 */
const PROBE = `
const [bundleUrl] = process.argv.slice(1);
const mod = await import(bundleUrl);
const event = (method, path) => ({
  version: '2.0', routeKey: '$default', rawPath: path, rawQueryString: '', headers: {}, isBase64Encoded: false,
  requestContext: { requestId: 'probe', http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'probe' } },
});
const context = { awsRequestId: 'probe', getRemainingTimeInMillis: () => 10000 };
const notFound = await mod.handler(event('GET', '/nope'), context);
const notAllowed = await mod.handler(event('GET', '/v1.2/email/send'), context);
const webStreams = process.moduleLoadList.filter((name) => /webstreams.readablestream|stream.web$/.test(name));
console.log('PROBE ' + JSON.stringify({ exports: Object.keys(mod), notFound, notAllowed, webStreams }));
`;

interface ProbeResult {
  exports: string[];
  notFound: { statusCode: number; headers: Record<string, string>; body: string };
  notAllowed: { statusCode: number; headers: Record<string, string>; body: string };
  /** Node's web streams (`stream/web`, the readable stream's module) if loaded by then. */
  webStreams: string[];
}

/** A static ES import of Node's `http` module in bundled code (a dynamic `import()` is not one). */
const STATIC_HTTP = /(?:^|[;}\n])import\s*(?:[\w${},\s*]+from\s*)?"(?:node:)?http"/;

/** The bundle's own files (`index.mjs`, `chunks/…`, their maps), sorted, relative to `dir`. */
function bundleFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.mjs(\.map)?$/.test(file) && (file.startsWith('chunks/') || file.startsWith('index.')))
    .sort();
}

/** What a cold start reads: `index.mjs` and every chunk it imports statically, transitively (relative to `dir`). */
function startupFiles(dir: string): Set<string> {
  const staticImports = (file: string) => [...readFileSync(join(dir, file), 'utf8').matchAll(/(?:^|[;}\n])import\s*(?:[\w${},\s*]+from\s*)?"(\.\.?\/[^"]+)"/g)].map((m) => join(file, '..', m[1]!));
  const startup = new Set<string>();
  const visit = (file: string) => {
    if (startup.has(file)) return;
    startup.add(file);
    staticImports(file).forEach(visit);
  };
  visit('index.mjs');
  return startup;
}

describe('send function bundle', () => {
  let dir: string;
  let outfile: string;
  let size: number;
  /** The source files of what a cold start reads, as esbuild's metafile names them. */
  let startupInputs: string[];
  /** The source files of every chunk. */
  let allInputs: string[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'send-bundle-'));
    outfile = join(dir, 'index.mjs');
    const started = Date.now();
    const { metafile } = await buildFunction(SEND_ENTRY, dir);
    startupInputs = startupOutputs(metafile).flatMap((output) => Object.keys(metafile.outputs[output]!.inputs));
    allInputs = Object.values(metafile.outputs).flatMap((output) => Object.keys(output.inputs));
    size = bundleFiles(dir).reduce((sum, file) => sum + statSync(join(dir, file)).size, 0);
    console.info(
      `send bundle: index.mjs ${(statSync(outfile).size / 1024).toFixed(0)} KiB, ${bundleFiles(dir).length - 1} chunks, ${(size / 1024).toFixed(0)} KiB in all, built in ${Date.now() - started} ms`,
    );
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  /** Each marker (a string literal of the module, which minification keeps) is in a chunk a cold start does not read, and in none it does. */
  function expectOnlyInLazyChunks(markers: readonly string[]): void {
    const startup = startupFiles(dir);
    const readAtStart = [...startup].map((file) => readFileSync(join(dir, file), 'utf8')).join('\n');
    const lazy = bundleFiles(dir).filter((file) => file.endsWith('.mjs') && !startup.has(file)).map((file) => readFileSync(join(dir, file), 'utf8')).join('\n');
    for (const marker of markers) {
      expect({ marker, atStartUp: readAtStart.includes(marker), lazily: lazy.includes(marker) }).toEqual({ marker, atStartUp: false, lazily: true });
    }
  }

  it('builds a minified ESM bundle within the size budget', () => {
    const code = readFileSync(outfile, 'utf8');
    expect(code.startsWith(CJS_REQUIRE_BANNER)).toBe(true);
    expect(code).toMatch(/export\s*\{[^}]*\bhandler\b[^}]*\}/);
    expect(size).toBeLessThan(SIZE_BUDGET_BYTES);
  });

  it('keeps what most sends never use out of what a cold start reads: raw MIME composition and the scheduling clients are chunks of their own', () => {
    const chunks = bundleFiles(dir).filter((file) => file.startsWith('chunks/'));
    expect(chunks.length).toBeGreaterThan(0);
    const startup = startupFiles(dir);
    const readAtStart = [...startup].map((file) => readFileSync(join(dir, file), 'utf8')).join('\n');
    // What only a message past Simple content's header limits, or a schedule, needs.
    expect(readAtStart).not.toContain('CreateScheduleCommand');
    expect(readAtStart).not.toContain('AWSSimpleQueueService');
    expect(readAtStart).not.toContain('_createMixed'); // nodemailer's MailComposer
    const lazy = chunks.filter((file) => !startup.has(file)).map((file) => readFileSync(join(dir, file), 'utf8')).join('\n');
    expect(lazy).toContain('CreateScheduleCommand');
    expect(lazy).toContain('_createMixed');
  });

  it('keeps the template engine out of what a cold start reads: Handlebars is a chunk loaded by the first templated message', () => {
    const files = bundleFiles(dir).filter((file) => file.endsWith('.mjs'));
    const startup = startupFiles(dir);
    // A message of Handlebars' parser, which minification keeps.
    const engine = 'Parse error on line';
    expect([...startup].filter((file) => readFileSync(join(dir, file), 'utf8').includes(engine))).toEqual([]);
    expect(files.filter((file) => !startup.has(file) && readFileSync(join(dir, file), 'utf8').includes(engine))).toHaveLength(1);
  });

  it('reads all it reads at start-up from two files, the entry and one chunk (infra/aws/startup-chunk.ts)', () => {
    const startup = [...startupFiles(dir)];
    expect(startup).toHaveLength(2);
    expect(startup).toContain('index.mjs');
  });

  it('keeps the adapters most sends never call out of what a cold start reads: schedules, templates, idempotency records, suppression lists, daily quotas, a tenant\'s pause', () => {
    // A string each adapter's own code holds (minification keeps string literals).
    expectOnlyInLazyChunks([
      'templates, the most it may; delete one first', // template-store.ts
      'is missing parts of its body', // schedule-store.ts
      '#status = :inProgress AND lockUntil = :expected', // dynamodb-idempotency-store.ts
      'attribute_not_exists(used) OR used <= :atMost', // dynamodb-daily-usage.ts
      'ADD #count :by', // dynamodb-suppression-store.ts
      'attribute_exists(pk) AND attribute_not_exists(#at)', // dynamodb-reputation-store.ts (a pause)
      'OrganizationsPaused', // pause-organization.ts (the metric the stack's alarm watches)
    ]);
  });

  it('keeps what only some messages need out of what a cold start reads: the section 12 rules and file names, the Idempotency-Key steps, the scheduling path', () => {
    expectOnlyInLazyChunks([
      'must be an object of header field names to values', // message-content.ts
      'vsmacros', // file-names.ts (SES's unsupported attachment types)
      'IN_FLIGHT', // idempotency.ts (a message's checkpoint)
      "could not arm a scheduled message's timer", // scheduling.ts
    ]);
    expect(startupInputs.filter((input) => input.includes('node_modules/canonicalize/'))).toEqual([]);
  });

  it('compiles no regular expression with a Unicode property escape at start-up: each costs a cold start 0.6 to 1.7 ms', () => {
    // V8 checks a regular expression literal when it parses the code, and a \p{…} escape makes it
    // build that property's set of code points then, whether or not the expression is ever used.
    const escapes = [...startupFiles(dir)].flatMap((file) => readFileSync(join(dir, file), 'utf8').match(/\\[pP]\{[^}]*\}/g) ?? []);
    expect(escapes).toEqual([]);
  });

  it('bundles validator from its ES module build, which V8 parses once, not from the CommonJS one the source imports', () => {
    const validator = startupInputs.filter((input) => input.includes('node_modules/validator/'));
    expect(validator.length).toBeGreaterThan(0);
    expect(validator.filter((input) => !input.includes('node_modules/validator/es/'))).toEqual([]);
  });

  it("gives the DynamoDB client's endpoint cache an ES module for mnemonist's CommonJS LRUCache, and bundles no mnemonist at all", () => {
    expect(startupInputs).toContain(relative(REPO_ROOT, ENDPOINT_CACHE_LRU));
    // The copy test/unit/endpoint-cache-lru.test.ts holds to mnemonist's answers: the top-level one, its ES build.
    const endpointCache = allInputs.filter((input) => input.includes('/@aws-sdk/endpoint-cache/'));
    expect(endpointCache.length).toBeGreaterThan(0);
    expect(endpointCache.filter((input) => !input.startsWith('node_modules/@aws-sdk/endpoint-cache/dist-es/'))).toEqual([]);
    expect(allInputs.filter((input) => /node_modules\/(mnemonist|obliterator)\//.test(input))).toEqual([]);
  });

  it('keeps nodemailer\'s extension table and the X-Ray SDK out of what a cold start reads: each is a chunk loaded on demand', () => {
    const startup = startupFiles(dir);
    const holding = (marker: string) => bundleFiles(dir).filter((file) => file.endsWith('.mjs') && readFileSync(join(dir, file), 'utf8').includes(marker));
    // An entry of the table (loaded for an attachment without a ContentType), and a variable
    // only the X-Ray SDK reads (loaded when traceSdkCalls turns the Powertools Tracer on).
    for (const marker of ['application/applixware', 'AWS_XRAY_DAEMON_ADDRESS']) {
      const files = holding(marker);
      expect(files.length).toBeGreaterThan(0);
      expect(files.filter((file) => startup.has(file))).toEqual([]);
    }
  });

  it('imports no node:http at start-up: as an ES module it loads undici, Node\'s fetch, on Node 22 and later', () => {
    // The SDK imports it itself, dynamically, for its first plain-HTTP request (only local endpoints are).
    const startup = [...startupFiles(dir)].filter((file) => STATIC_HTTP.test(readFileSync(join(dir, file), 'utf8')));
    expect(startup).toEqual([]);
    // The pattern does find such an import where there is one.
    expect(STATIC_HTTP.test('import{Agent as a}from"node:http";')).toBe(true);
  });

  it('is byte-for-byte what NodejsFunction bundles for the stack, chunks and all', () => {
    const { app, stack } = buildStack({}, { bundle: true });
    const { S3Key } = Template.fromStack(stack).toJSON().Resources[stack.getLogicalId(stack.sendFunction.node.defaultChild as never)].Properties.Code;
    const asset = join(app.synth().directory, `asset.${String(S3Key).replace(/\.zip$/, '')}`);
    // Chunk names carry a hash of their content and source map, whose paths are relative to
    // where the bundle was written: the same code built elsewhere differs in those hashes only.
    const unhashed = (text: string) => text.replace(/-[A-Z0-9]{8}\.mjs/g, '.mjs');
    const code = (root: string) => bundleFiles(root).filter((file) => file.endsWith('.mjs')).map((file) => `${unhashed(file)}\n${unhashed(readFileSync(join(root, file), 'utf8'))}`).sort();
    const [deployed, built] = [code(asset), code(dir)];
    expect(deployed.length).toBe(built.length);
    expect(deployed.every((file, i) => file === built[i])).toBe(true);
  });

  it('can encode a non-ASCII display name in ESM, which needs the require banner', async () => {
    // libmime is only reached with real traffic; bundle its caller alone with the same options.
    const probeDir = join(dir, 'from-address');
    const probe = join(probeDir, 'index.mjs');
    const { entryPoints: _entry, ...options } = sendEsbuildOptions(probeDir);
    await build({
      ...options,
      stdin: { contents: "export { formatFromAddress } from './functions/shared/mail/ses-message';", resolveDir: REPO_ROOT, loader: 'ts' },
    });
    const script = `const m = await import(${JSON.stringify(pathToFileURL(probe).href)}); console.log(m.formatFromAddress('a@example.com', 'Zoë'));`;
    const stdout = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    expect(stdout.trim()).toBe('=?UTF-8?B?Wm/Dqw==?= <a@example.com>');
  });

  it('loads in Node with only TABLE_NAME set and answers 404/405 as problem documents', () => {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      TABLE_NAME: 'email-send-api-bundle-test',
      AWS_REGION: 'eu-west-1',
      POWERTOOLS_LOG_LEVEL: 'SILENT',
    };
    const stdout = execFileSync(process.execPath, ['--input-type=module', '-e', PROBE, pathToFileURL(outfile).href], {
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 20_000,
    });
    const line = stdout.split('\n').find((l) => l.startsWith('PROBE '));
    const result = JSON.parse(line!.slice('PROBE '.length)) as ProbeResult;
    expect(result.exports).toContain('handler');
    expect(result.notFound.statusCode).toBe(404);
    expect(result.notFound.headers['Content-Type']).toBe('application/problem+json');
    expect(JSON.parse(result.notFound.body)).toMatchObject({ status: 404, requestId: 'probe' });
    expect(result.notAllowed.statusCode).toBe(405);
    expect(result.notAllowed.headers.Allow).toBe('POST');
    // Middy imports them for streamed responses only (infra/aws/middy-web-streams.ts).
    expect(result.webStreams).toEqual([]);
  });

  it("answers middy's one check on ReadableStream without loading Node's web streams until it is made", () => {
    // Middy uses the class for nothing but that check: a new use would need the real import back.
    const middy = readFileSync(join(REPO_ROOT, 'node_modules/@middy/core/index.js'), 'utf8').replace(/"(?:[^"\\\n]|\\.)*"|\/\/.*$/gm, '""');
    const uses = [...middy.matchAll(/.{0,24}\bReadableStream\b.{0,8}/g)].map(([use]) => use.trim());
    expect(uses.filter((use) => !/\bimport\b|\bfrom\b/.test(use)).every((use) => /instanceof\s+ReadableStream\b/.test(use))).toBe(true);
    expect(uses.filter((use) => /instanceof\s+ReadableStream\b/.test(use)).length).toBeGreaterThan(0);
    const script = `
      const { ReadableStream: StandIn } = await import('data:text/javascript,' + encodeURIComponent(${JSON.stringify(READABLE_STREAM_FOR_INSTANCEOF)}));
      const loaded = () => process.moduleLoadList.some((name) => /webstreams.readablestream/.test(name));
      const before = loaded();
      const answers = [new globalThis.ReadableStream() instanceof StandIn, ({}) instanceof StandIn, 'text' instanceof StandIn];
      console.log(JSON.stringify({ before, answers, after: loaded() }));`;
    const stdout = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    expect(JSON.parse(stdout)).toEqual({ before: false, answers: [true, false, false], after: true });
  });
});

/** A stand-in for a setting the template fills in at deploy time (a reference to another resource). */
function placeholderSetting(name: string): string {
  if (/_ARN$/.test(name)) return 'arn:aws:sqs:us-east-1:123456789012:placeholder';
  if (/_KEY_ID$/.test(name)) return 'arn:aws:kms:us-east-1:123456789012:key/00000000-0000-0000-0000-000000000000';
  if (/(_URL|_ISSUER|_ORIGINS)$/.test(name)) return 'https://placeholder.example';
  return `placeholder-${name.toLowerCase()}`;
}

describe('every function the stack deploys', () => {
  let functions: { id: string; asset: string; environment: Record<string, string> }[];
  let scratch: string;

  beforeAll(() => {
    const { app, stack } = buildStack({}, { bundle: true });
    const template = Template.fromStack(stack).toJSON();
    const assembly = app.synth().directory;
    scratch = mkdtempSync(join(tmpdir(), 'function-assets-'));
    functions = Object.entries(template.Resources as Record<string, { Type: string; Properties: { Code?: { S3Key?: string }; Handler?: string; Environment?: { Variables?: Record<string, unknown> } } }>)
      .filter(([, resource]) => resource.Type === 'AWS::Lambda::Function' && typeof resource.Properties.Code?.S3Key === 'string' && resource.Properties.Handler === 'index.handler')
      .map(([id, resource]) => {
        // Lambda has no node_modules: each asset alone, far from this repository's.
        const asset = join(scratch, id);
        cpSync(join(assembly, `asset.${String(resource.Properties.Code!.S3Key).replace(/\.zip$/, '')}`), asset, { recursive: true });
        const variables = resource.Properties.Environment?.Variables ?? {};
        const environment = Object.fromEntries(Object.entries(variables).map(([name, value]) => [name, typeof value === 'string' ? value : placeholderSetting(name)]));
        return { id, asset, environment };
      });
  }, 120_000);

  afterAll(() => {
    rmSync(scratch, { recursive: true, force: true });
  });

  it('imports no node:http at start-up (on Node 22 and later, as an ES module it loads undici with it)', () => {
    expect(functions.length).toBeGreaterThan(5);
    const importing = functions.filter(({ asset }) => [...startupFiles(asset)].some((file) => STATIC_HTTP.test(readFileSync(join(asset, file), 'utf8'))));
    expect(importing.map(({ id }) => id)).toEqual([]);
  });

  it('reads at start-up the entry and at most one chunk, each function (infra/aws/startup-chunk.ts)', () => {
    const reads = functions.map(({ id, asset }) => ({ id, files: startupFiles(asset).size }));
    expect(reads.filter(({ files }) => files > 2)).toEqual([]);
    expect(reads.filter(({ files }) => files === 2).length).toBeGreaterThan(5);
  });

  it('loads alone in Node with its deployed settings and exports its handler, each split into an entry and chunks', () => {
    const loaded = functions.map(({ id, asset, environment }) => {
      const script = `const m = await import(${JSON.stringify(pathToFileURL(join(asset, 'index.mjs')).href)}); console.log('LOADED ' + typeof m.handler);`;
      const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test', POWERTOOLS_LOG_LEVEL: 'SILENT', ...environment };
      const stdout = execFileSync(process.execPath, ['--input-type=module', '-e', script], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 20_000 });
      return { id, handler: stdout.split('\n').find((line) => line.startsWith('LOADED '))?.slice('LOADED '.length), chunks: existsSync(join(asset, 'chunks')) };
    });
    expect(loaded).toEqual(functions.map(({ id }) => ({ id, handler: 'function', chunks: !id.startsWith('SettingsPageFunction') })));
  }, 60_000);
});

/** Serves the page and the OpenID client library from the bundle alone, with the page's settings. */
const PAGE_PROBE = `
const [bundleUrl] = process.argv.slice(1);
const mod = await import(bundleUrl);
const get = (path) => mod.handler({
  version: '2.0', routeKey: '$default', rawPath: path, rawQueryString: '', headers: {}, isBase64Encoded: false,
  requestContext: { requestId: 'probe', http: { method: 'GET', path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'probe' } },
}, { awsRequestId: 'probe', getRemainingTimeInMillis: () => 10000 });
const answers = {};
for (const path of ['/settings', '/settings/app.js', '/settings/page.js', '/settings/schedules.js', '/settings/session.js', '/settings/templates.js', '/settings/oidc-client-ts.min.js', '/settings/config.json']) {
  const r = await get(path);
  const body = r.isBase64Encoded ? Buffer.from(r.body, 'base64') : Buffer.from(r.body);
  answers[path] = { statusCode: r.statusCode, type: r.headers['Content-Type'], length: body.length, body: path.endsWith('.json') ? body.toString('utf8') : '' };
}
console.log('PROBE ' + JSON.stringify(answers));
`;

describe('settings page bundle, as the stack deploys it', () => {
  it('carries the page\'s files and the OpenID client library, and serves them with nothing else around it', () => {
    const { app, stack } = buildStack({}, { bundle: true });
    const fn = stack.node.findChild('SettingsPageFunction');
    const code = Template.fromStack(stack).toJSON().Resources[stack.getLogicalId(fn.node.defaultChild as never)].Properties.Code;
    const asset = join(app.synth().directory, `asset.${String(code.S3Key).replace(/\.zip$/, '')}`);
    // Lambda has no node_modules: copy the asset alone to a directory far from this repository's.
    const alone = mkdtempSync(join(tmpdir(), 'page-asset-'));
    try {
      cpSync(asset, alone, { recursive: true });
      expect(readdirSync(join(alone, 'assets')).sort()).toEqual(['app.js', 'index.html', 'page.js', 'schedules.js', 'session.js', 'style.css', 'templates.js', 'vendor']);
      const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, OIDC_ISSUER: 'https://issuer.example/pool', OIDC_CLIENT_ID: 'page-client', POWERTOOLS_LOG_LEVEL: 'SILENT' };
      const stdout = execFileSync(process.execPath, ['--input-type=module', '-e', PAGE_PROBE, pathToFileURL(join(alone, 'index.mjs')).href], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 20_000 });
      const answers = JSON.parse(stdout.split('\n').find((l) => l.startsWith('PROBE '))!.slice('PROBE '.length));
      expect(answers['/settings']).toMatchObject({ statusCode: 200, type: 'text/html; charset=utf-8', length: statSync(join(REPO_ROOT, 'functions/settings-page/assets/index.html')).size });
      for (const script of ['app.js', 'page.js', 'schedules.js', 'session.js', 'templates.js']) {
        expect(answers[`/settings/${script}`]).toMatchObject({ statusCode: 200, type: 'text/javascript; charset=utf-8', length: statSync(join(REPO_ROOT, 'functions/settings-page/assets', script)).size });
      }
      expect(answers['/settings/oidc-client-ts.min.js']).toMatchObject({ statusCode: 200, type: 'text/javascript; charset=utf-8' });
      expect(answers['/settings/oidc-client-ts.min.js'].length).toBeGreaterThan(20_000);
      expect(JSON.parse(answers['/settings/config.json'].body)).toMatchObject({ issuer: 'https://issuer.example/pool', clientId: 'page-client' });
    } finally {
      rmSync(alone, { recursive: true, force: true });
    }
  }, 60_000);
});
