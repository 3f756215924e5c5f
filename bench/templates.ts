/**
 * `npm run bench -- --templates`: what a template costs on the send path. The same 100 messages
 * are sent through the local stack (in memory, on 127.0.0.1) twice per round, once written out
 * and once as `Template` with per-message variables, in alternating order; the ratio of the
 * medians, taken in the same run on the same stack, is the figure (target: at most 1.10). The
 * first round of each is a warm-up (it loads the engine and compiles the template) and is not
 * counted, as a Lambda instance pays it once.
 */
import { performance } from 'node:perf_hooks';
import { startLocalStack } from '../infra/local/stack';
import { percentile, round } from './stats';

export interface TemplateBench {
  readonly runs: number;
  readonly messages: number;
  readonly writtenMs: number;
  readonly templatedMs: number;
  readonly ratio: number;
  readonly target: number;
  readonly pass: boolean;
}

const TARGET = 1.1;
const NAME = 'bench-receipt';
const SUBJECT = 'Your receipt {{order.id}}';
const TEXT = 'Hello {{firstName}},\n\nThank you for your order {{order.id}}.\n{{#each order.lines}}- {{name}}: {{price}}\n{{/each}}\nTotal: {{order.total}}\n';
const HTML = '<p>Hello {{firstName}},</p><p>Thank you for your order {{order.id}}.</p><ul>{{#each order.lines}}<li>{{name}}: {{price}}</li>{{/each}}</ul><p>Total: {{order.total}}</p>';

function variablesOf(i: number) {
  const lines = [{ name: `Tea ${i}`, price: '4.00' }, { name: 'Cake & cream', price: '3.50' }];
  return { firstName: `Customer ${i}`, order: { id: `A-${i}`, total: '7.50', lines } };
}

/** The message as the template renders it, written out by hand (values escaped in the HTML as Handlebars does). */
function written(i: number) {
  const v = variablesOf(i);
  const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return {
    Subject: `Your receipt ${v.order.id}`,
    TextContent: `Hello ${v.firstName},\n\nThank you for your order ${v.order.id}.\n${v.order.lines.map((l) => `- ${l.name}: ${l.price}\n`).join('')}Total: ${v.order.total}\n`,
    HtmlContent: `<p>Hello ${v.firstName},</p><p>Thank you for your order ${v.order.id}.</p><ul>${v.order.lines.map((l) => `<li>${escape(l.name)}: ${l.price}</li>`).join('')}</ul><p>Total: ${v.order.total}</p>`,
  };
}

export async function measureTemplates(options: { readonly runs: number; readonly messages: number }, progress: (line: string) => void): Promise<TemplateBench> {
  // The stack runs in this process: its request logs and metrics would bury the figures.
  process.env.POWERTOOLS_LOG_LEVEL = 'ERROR';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  const stack = await startLocalStack({ port: 0, dynamodbPort: 0, sesPort: 0, oidcPort: 0, data: 'memory', mailboxSimulator: false });
  try {
    const demo = stack.demo;
    if (!demo) throw new Error('the local stack made no demo tenant');
    const call = (method: string, path: string, body: unknown) =>
      fetch(`${stack.apiUrl}${path}`, { method, headers: { authorization: `Bearer ${demo.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const saved = await call('PUT', `/v1.2/templates/${NAME}`, { OrganizationId: demo.organizationId, Subject: SUBJECT, TextContent: TEXT, HtmlContent: HTML });
    if (saved.status !== 201) throw new Error(`could not save the template: ${saved.status} ${await saved.text()}`);
    const from = `receipts@${demo.senderDomain}`;
    const indexes = Array.from({ length: options.messages }, (_, i) => i);
    const bodies = {
      written: { OrganizationId: demo.organizationId, Messages: indexes.map((i) => ({ From: from, To: [`c${i}@example.org`], ...written(i) })) },
      templated: { OrganizationId: demo.organizationId, Messages: indexes.map((i) => ({ From: from, To: [`c${i}@example.org`], Template: { Name: NAME, Variables: variablesOf(i) } })) },
    };
    // The rendered messages must be the very ones written out, or the comparison means nothing.
    const preview = (await (await call('POST', `/v1.2/templates/${NAME}/render`, { OrganizationId: demo.organizationId, Variables: variablesOf(7) })).json()) as Record<string, unknown>;
    const expected = written(7);
    if (preview.Subject !== expected.Subject || preview.TextContent !== expected.TextContent || preview.HtmlContent !== expected.HtmlContent) {
      throw new Error('the template does not render to the written messages; fix the benchmark');
    }
    const time = async (body: unknown) => {
      const started = performance.now();
      const response = await call('POST', '/v1.2/email/send', body);
      const text = await response.text();
      if (response.status !== 200) throw new Error(`send answered ${response.status}: ${text.slice(0, 300)}`);
      return performance.now() - started;
    };
    const samples = { written: [] as number[], templated: [] as number[] };
    for (let run = 0; run <= options.runs; run++) {
      // Alternate which goes first, so neither always follows the other's garbage.
      const order = run % 2 === 0 ? (['written', 'templated'] as const) : (['templated', 'written'] as const);
      for (const kind of order) {
        const ms = await time(bodies[kind]);
        if (run > 0) samples[kind].push(ms);
      }
      if (run > 0 && run % 5 === 0) progress(`templates: ${run}/${options.runs} rounds`);
    }
    const writtenMs = percentile(samples.written, 50);
    const templatedMs = percentile(samples.templated, 50);
    const ratio = templatedMs / writtenMs;
    return { runs: options.runs, messages: options.messages, writtenMs: round(writtenMs), templatedMs: round(templatedMs), ratio: round(ratio, 3), target: TARGET, pass: ratio <= TARGET };
  } finally {
    await stack.stop();
  }
}

export function renderTemplates(result: TemplateBench): string {
  return [
    `A ${result.messages}-message request, median of ${result.runs} runs each (same stack, same run):`,
    '',
    `| Request | Median ms |`,
    `|---|---|`,
    `| written out | ${result.writtenMs} |`,
    `| one template, per-message Variables | ${result.templatedMs} |`,
    '',
    `${result.pass ? 'PASS' : 'MISS'}  templated / written ≤ ${result.target}: ${result.ratio}`,
  ].join('\n');
}
