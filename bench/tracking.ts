/**
 * `npm run bench -- --tracking` (and part of the full run): what open and click tracking costs the
 * local SES front (infra/local/tracking.ts), which plays SES's rewriting on a laptop.
 *
 * - Rewriting: a tracked SendEmail whose HTML is 100 KB with a link every ~500 bytes, prepared
 *   as the front prepares it (read, rewritten, every link signed, written back), timed per
 *   message in this process; target: p50 at most 1 ms. The rewrite of the HTML alone is shown too.
 * - Untracked sends: the same untracked SendEmail (the same 100 KB HTML, the worst case for the
 *   front's look at the configuration set) through two fronts on one emulator, one with the
 *   tracker and one without, alternately, in the same run; target: the median of the rounds'
 *   ratios (with / without, each round's pair sent back to back, so the machine's load drifting
 *   between rounds cancels) at most 1.05. The tracker's whole work on such a send (finding the
 *   configuration set) is timed in this process too.
 */
import { performance } from 'node:perf_hooks';
import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import type { SendEmailCommandInput } from '@aws-sdk/client-sesv2';
import { configurationSetFor } from '../functions/shared/mail/tracking';
import { startSesEmulator } from '../infra/local/emulators';
import { createMailViewer } from '../infra/local/mail-viewer';
import { startRateGate } from '../infra/local/ses-rate-gate';
import { createTracker } from '../infra/local/tracking';
import { rewriteHtml } from '../infra/local/tracking-rewrite';
import { percentile, round } from './stats';

export interface TrackingBench {
  readonly htmlBytes: number;
  readonly links: number;
  readonly rewrite: { readonly runs: number; readonly p50Ms: number; readonly p99Ms: number; readonly htmlOnlyP50Ms: number; readonly target: number; readonly pass: boolean };
  readonly untracked: { readonly runs: number; readonly withoutMs: number; readonly withMs: number; readonly ratio: number; readonly lookP50Ms: number; readonly target: number; readonly pass: boolean };
}

const REWRITE_TARGET_MS = 1;
const RATIO_TARGET = 1.05;
const BASE = 'EmailApi-Bench';

/** A newsletter of about `bytes` of HTML: a product block with a link every ~500 bytes. */
export function newsletterHtml(bytes: number): string {
  const blocks: string[] = ['<!doctype html><html><head><meta charset="utf-8"><title>News</title></head><body><table width="100%">'];
  let size = blocks[0]?.length ?? 0;
  for (let i = 0; size < bytes - 40; i++) {
    const block =
      `<tr><td style="padding:12px;font-family:Arial,sans-serif"><a href="https://shop.example/p/${i}?utm_source=mail&amp;utm_medium=email&amp;utm_campaign=autumn" style="color:#0a58ca">Product ${i}</a>` +
      `<p>Hand-made, in stock and shipped within two days: the autumn collection's item number ${i}, with free returns.</p></td></tr>\n`;
    blocks.push(block);
    size += block.length;
  }
  blocks.push('</table><p><a href="mailto:help@shop.example">Help</a></p></body></html>');
  return blocks.join('');
}

function request(html: string, configurationSet: string | undefined): SendEmailCommandInput {
  return {
    FromEmailAddress: 'news@shop.example',
    Destination: { ToAddresses: ['reader@example.org'] },
    Content: { Simple: { Subject: { Data: 'Autumn' }, Body: { Html: { Data: html }, Text: { Data: 'Autumn, in text.' } } } },
    EmailTags: [{ Name: 'OrganizationId', Value: 'org-bench' }],
    ...(configurationSet && { ConfigurationSetName: configurationSet }),
  };
}

function measureRewrite(html: string, runs: number) {
  const tracker = createTracker({ region: 'us-east-1', origin: () => 'http://127.0.0.1:8005', publish: () => undefined });
  const body = Buffer.from(JSON.stringify(request(html, configurationSetFor(BASE, { opens: true, clicks: true }))));
  const urls = { open: 'http://127.0.0.1:8005/track/open/x/y', click: (i: number) => `http://127.0.0.1:8005/track/click/x/${i}/y` };
  const untrackedBody = Buffer.from(JSON.stringify(request(html, BASE)));
  const prepared: number[] = [];
  const htmlOnly: number[] = [];
  const looked: number[] = [];
  let links = 0;
  // The first tenth warms the JIT up, as the first messages of a start would.
  const warmUp = Math.ceil(runs / 10);
  for (let run = 0; run < runs + warmUp; run++) {
    let started = performance.now();
    const tracked = tracker.prepare(body);
    const preparedMs = performance.now() - started;
    if (!tracked || tracked.body.length <= body.length) throw new Error('the tracked message was not rewritten; fix the benchmark');
    started = performance.now();
    links = rewriteHtml(html, { opens: true, clicks: true }, urls).links.length;
    const htmlMs = performance.now() - started;
    started = performance.now();
    if (tracker.prepare(untrackedBody) !== undefined) throw new Error('an untracked message was rewritten; fix the benchmark');
    const lookMs = performance.now() - started;
    if (run >= warmUp) {
      prepared.push(preparedMs);
      htmlOnly.push(htmlMs);
      looked.push(lookMs);
    }
  }
  return { links, prepared, htmlOnly, looked };
}

async function measureUntracked(html: string, runs: number) {
  const emulator = await startSesEmulator();
  const fronts = {
    without: await startRateGate({ upstream: emulator.endpoint, viewer: createMailViewer() }),
    with: await startRateGate({ upstream: emulator.endpoint, viewer: createMailViewer(), tracker: createTracker({ region: 'us-east-1', origin: () => 'http://127.0.0.1:1', publish: () => undefined }) }),
  };
  const clients = {
    without: new SESv2Client({ region: 'us-east-1', endpoint: fronts.without.endpoint, maxAttempts: 1, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
    with: new SESv2Client({ region: 'us-east-1', endpoint: fronts.with.endpoint, maxAttempts: 1, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
  };
  const input = request(html, BASE);
  const samples = { without: [] as number[], with: [] as number[], ratios: [] as number[] };
  try {
    for (let run = 0; run <= runs; run++) {
      // Alternate which goes first, so neither always follows the other's garbage.
      const order = run % 2 === 0 ? (['without', 'with'] as const) : (['with', 'without'] as const);
      const ms = { without: 0, with: 0 };
      for (const kind of order) {
        const started = performance.now();
        await clients[kind].send(new SendEmailCommand(input));
        ms[kind] = performance.now() - started;
      }
      if (run > 0) {
        samples.without.push(ms.without);
        samples.with.push(ms.with);
        samples.ratios.push(ms.with / ms.without);
      }
      // The emulator keeps every message; emptied now and then so the store's growth is not measured.
      if (run % 50 === 0) await fetch(`${emulator.endpoint}/clear-store`, { method: 'POST' });
    }
  } finally {
    clients.without.destroy();
    clients.with.destroy();
    await fronts.without.close();
    await fronts.with.close();
    await emulator.close();
  }
  return samples;
}

export async function measureTracking(options: { readonly runs: number }, progress: (line: string) => void): Promise<TrackingBench> {
  const html = newsletterHtml(100 * 1024);
  progress(`tracking: preparing a tracked ${Math.round(html.length / 1024)} KB message ${options.runs} times…`);
  const rewrite = measureRewrite(html, options.runs);
  progress(`tracking: ${options.runs} untracked sends each through a front with and without the tracker…`);
  const untracked = await measureUntracked(html, options.runs);
  const p50 = percentile(rewrite.prepared, 50);
  const withoutMs = percentile(untracked.without, 50);
  const withMs = percentile(untracked.with, 50);
  const ratio = percentile(untracked.ratios, 50);
  return {
    htmlBytes: Buffer.byteLength(html),
    links: rewrite.links,
    rewrite: { runs: options.runs, p50Ms: round(p50, 3), p99Ms: round(percentile(rewrite.prepared, 99), 3), htmlOnlyP50Ms: round(percentile(rewrite.htmlOnly, 50), 3), target: REWRITE_TARGET_MS, pass: p50 <= REWRITE_TARGET_MS },
    untracked: { runs: options.runs, withoutMs: round(withoutMs, 2), withMs: round(withMs, 2), ratio: round(ratio, 3), lookP50Ms: round(percentile(rewrite.looked, 50), 4), target: RATIO_TARGET, pass: ratio <= RATIO_TARGET },
  };
}

export function renderTracking(result: TrackingBench): string {
  const { rewrite, untracked } = result;
  return [
    `Open and click tracking on the local SES front (${Math.round(result.htmlBytes / 1024)} KB of HTML, ${result.links} links):`,
    '',
    '| Measure | ms |',
    '|---|---|',
    `| tracked message prepared (read, rewritten, signed, written), p50 of ${rewrite.runs} | ${rewrite.p50Ms} |`,
    `| the same, p99 | ${rewrite.p99Ms} |`,
    `| the HTML rewrite alone, p50 | ${rewrite.htmlOnlyP50Ms} |`,
    `| untracked SendEmail, front without the tracker, median of ${untracked.runs} | ${untracked.withoutMs} |`,
    `| untracked SendEmail, front with the tracker, median of ${untracked.runs} | ${untracked.withMs} |`,
    `| the tracker's look at an untracked message (its configuration set), p50 | ${untracked.lookP50Ms} |`,
    '',
    `${rewrite.pass ? 'PASS' : 'MISS'}  tracked 100 KB message prepared, p50 ≤ ${rewrite.target} ms: ${rewrite.p50Ms} ms`,
    `${untracked.pass ? 'PASS' : 'MISS'}  untracked send, with / without the tracker (median of the rounds' ratios) ≤ ${untracked.target}: ${untracked.ratio}`,
  ].join('\n');
}
