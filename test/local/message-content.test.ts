/**
 * CONTRACT section 12 through the local stack, over real HTTP with the typed client: what the SES
 * emulator received for ReplyTo, Headers, Tags and Attachments (bytes, content types, inline
 * disposition, header values decoded, tags), the tags echoed by the status API and webhooks, the
 * all-or-nothing refusals, the mail viewer's additions, and the body limits the local gateway
 * shares with API Gateway and Lambda.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import libmime from 'libmime';
import { generateApiKey } from '../../functions/shared/domain/api-keys';
import type { Message } from '../support/api-client';
import type { TestStack, Tenant } from './helpers';
import { adminEnv, adminJson, clearEmails, clientOf, expectClientProblem, expectProblem, messageBody, provisionTenant, send, startTestStack } from './helpers';

let stack: TestStack;
let tenant: Tenant;

beforeAll(async () => {
  stack = await startTestStack({ webhookRetryScale: 0.001 });
  tenant = await provisionTenant(adminEnv(stack));
});
afterAll(async () => stack?.stop());
beforeEach(async () => clearEmails(stack.sesUrl));

/** What the stack's SES (the emulator behind the local front) stored, with the viewer's additions. */
async function stored(): Promise<Record<string, any>[]> {
  const response = await fetch(`${stack.sesUrl}/store`);
  return ((await response.json()) as { emails: Record<string, any>[] }).emails;
}

async function sendMessages(messages: Partial<Message>[], who: Tenant = tenant) {
  const base = messageBody(who.organizationId).Messages[0]!;
  return clientOf(stack, who.apiKey).POST('/v1.2/email/send', {
    body: { OrganizationId: who.organizationId, Messages: messages.map((m) => ({ ...base, ...m }) as Message) },
  });
}

const PDF = randomBytes(30_000);
const PNG = randomBytes(2_000);
const CSV = Buffer.from('id,total\n42,9.99\n');

describe('what SES receives', () => {
  it('gets every field: attachments byte for byte with their types, an inline image, Reply-To, headers encoded when not ASCII, and tags', async () => {
    const { data, response } = await sendMessages([
      {
        HtmlContent: '<p>Your invoice</p><img src="cid:logo@acme">',
        ReplyTo: ['billing@example.com', 'Support@Bücher.example'],
        Headers: { 'List-Unsubscribe': '<https://example.com/u?id=42>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click', 'X-Greeting': 'Grüße aus Köln' },
        Tags: { invoice: 'inv-42', customer: 'c_981' },
        Attachments: [
          { FileName: 'invoice.pdf', Content: PDF.toString('base64') },
          { FileName: 'logo.png', Content: PNG.toString('base64'), ContentId: 'logo@acme' },
          { FileName: 'totals.csv', Content: CSV.toString('base64'), ContentType: 'text/plain' },
          { FileName: 'blob', Content: 'AAEC' },
        ],
      },
    ]);
    expect(response.status).toBe(200);
    const [email] = await stored();
    expect(email!.messageId).toBe((data!.Messages[0] as { MessageId: string }).MessageId);
    expect(email!.replyTo).toEqual(['billing@example.com', 'Support@xn--bcher-kva.example']);
    const attachments = email!.attachments as Record<string, any>[];
    expect(attachments.map((a) => [a.filename, a.contentType, a.contentDisposition, a.contentId ?? null])).toEqual([
      ['invoice.pdf', 'application/pdf', 'ATTACHMENT', null],
      ['logo.png', 'image/png', 'INLINE', 'logo@acme'],
      ['totals.csv', 'text/plain', 'ATTACHMENT', null],
      ['blob', 'application/octet-stream', 'ATTACHMENT', null],
    ]);
    expect(Buffer.from(attachments[0]!.content, 'base64').equals(PDF)).toBe(true);
    expect(Buffer.from(attachments[1]!.content, 'base64').equals(PNG)).toBe(true);
    expect(Buffer.from(attachments[3]!.content, 'base64')).toEqual(Buffer.from([0, 1, 2]));

    const headers = email!.headers as { name: string; value: string; decoded: string }[];
    expect(headers.map((h) => h.name)).toEqual(['List-Unsubscribe', 'List-Unsubscribe-Post', 'X-Greeting']);
    expect(headers[0]!.value).toBe('<https://example.com/u?id=42>');
    // Non-ASCII goes out as RFC 2047 encoded-words, printable ASCII only, and decodes back.
    expect(headers[2]!.value).toMatch(/^[\x20-\x7e]+$/);
    expect(headers[2]!.value).toContain('=?UTF-8?');
    expect(libmime.decodeWords(headers[2]!.value)).toBe('Grüße aus Köln');
    expect(headers[2]!.decoded).toBe('Grüße aus Köln');
    expect(email!.tags).toEqual({ invoice: 'inv-42', customer: 'c_981' });
    // The viewer's HTML shows the inline image: its cid: reference is the image itself.
    expect(email!.body.html).toContain(`src="data:image/png;base64,${PNG.toString('base64')}"`);
  });

  it('composes MIME for headers SES Simple content cannot carry (50 fields, a 998-character value), everything else unchanged', async () => {
    const headers: Record<string, string> = {};
    for (let i = 0; i < 49; i++) headers[`X-Field-${i}`] = `value ${i}`;
    headers['X-Long'] = `${'word '.repeat(199)}end`.slice(0, 998);
    const { response } = await sendMessages([
      { Bcc: ['audit@example.net'], ReplyTo: ['billing@example.com'], Headers: headers, Tags: { batch: 'b1' }, Attachments: [{ FileName: 'invoice.pdf', Content: PDF.toString('base64') }] },
    ]);
    expect(response.status).toBe(200);
    const [email] = await stored();
    const received = Object.fromEntries((email!.headers as { name: string; decoded: string }[]).map((h) => [h.name, h.decoded]));
    expect(received).toEqual(headers);
    expect(email!.destination.bcc).toEqual(['audit@example.net']);
    expect(email!.replyTo.join()).toContain('billing@example.com');
    expect(email!.tags).toEqual({ batch: 'b1' });
    expect(Buffer.from(email!.attachments[0].content, 'base64').equals(PDF)).toBe(true);
  });

  it('plays the mailbox simulator for composed MIME too: the out-of-office reply quotes its subject', async () => {
    const headers = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`X-Field-${i}`, 'v']));
    const { response } = await sendMessages([{ To: ['ooto@simulator.amazonses.com'], Subject: 'Grüße aus Köln', Headers: headers }]);
    expect(response.status).toBe(200);
    const until = Date.now() + 2_000;
    let emails = await stored();
    while (emails.length < 2 && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      emails = await stored();
    }
    expect(emails.map((email) => email.subject)).toContain('Out of the office: Grüße aus Köln');
  });

  it('takes attachments on every message of a batch', async () => {
    const messages = Array.from({ length: 5 }, (_, i) => ({ To: [`user${i}@example.org`], Attachments: [{ FileName: `receipt-${i}.pdf`, Content: Buffer.from(`receipt ${i}`).toString('base64') }] }));
    const { response, data } = await sendMessages(messages);
    expect(response.status).toBe(200);
    const emails = await stored();
    expect(emails).toHaveLength(5);
    for (const [i, result] of data!.Messages.entries()) {
      const email = emails.find((e) => e.messageId === (result as { MessageId: string }).MessageId)!;
      expect(Buffer.from(email.attachments[0].content, 'base64').toString()).toBe(`receipt ${i}`);
    }
  });
});

describe('refusals: all or nothing, a pointer per problem', () => {
  it('refuses service-written headers (any case), service tags, SES-refused file types and bad base64, and sends none of the batch', async () => {
    const answer = await sendMessages([
      { To: ['ok@example.org'] },
      {
        ReplyTo: ['not an address'],
        Headers: { 'content-type': 'text/plain', 'REPLY-TO': 'x@example.com', 'Bad Name': 'x', 'X-Line': 'a\r\nBcc: evil@example.com' },
        Tags: { OrganizationId: 'mine', 'bad tag': 'x', fine: 'has space' },
        Attachments: [
          { FileName: 'setup.exe', Content: 'AAAA' },
          { FileName: 'Script.JS. ', Content: 'AAAA' },
          { FileName: 'note.txt', Content: 'AAA=\n' },
          { FileName: 'dir/note.txt', Content: 'not base64!' },
          { FileName: 'a.png', Content: 'AAAA', ContentType: 'image/png; name=a' },
        ],
      },
    ]);
    const problem = expectClientProblem(answer, 400);
    expect(problem.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual(
      [
        '/Messages/1/ReplyTo/0',
        '/Messages/1/Headers/content-type',
        '/Messages/1/Headers/REPLY-TO',
        '/Messages/1/Headers/Bad Name',
        '/Messages/1/Headers/X-Line',
        '/Messages/1/Tags/OrganizationId',
        '/Messages/1/Tags/bad tag',
        '/Messages/1/Tags/fine',
        '/Messages/1/Attachments/0/FileName',
        '/Messages/1/Attachments/1/FileName',
        '/Messages/1/Attachments/2/Content',
        '/Messages/1/Attachments/3/FileName',
        '/Messages/1/Attachments/3/Content',
        '/Messages/1/Attachments/4/ContentType',
      ].sort(),
    );
    expect(problem.errors.find((e: { pointer: string }) => e.pointer === '/Messages/1/Attachments/0/FileName').detail).toContain('.exe');
    expect(await stored()).toHaveLength(0);
  });

  it('refuses more than 10 attachments, 10 tags, 50 headers or 10 reply-to addresses', async () => {
    const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`X-H${i}`, 'v']));
    const answer = await sendMessages([
      {
        ReplyTo: Array.from({ length: 11 }, (_, i) => `r${i}@example.com`),
        Headers: many(51),
        Tags: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`t${i}`, 'v'])),
        Attachments: Array.from({ length: 11 }, (_, i) => ({ FileName: `f${i}.txt`, Content: 'AAAA' })),
      },
    ]);
    const problem = expectClientProblem(answer, 400);
    expect(problem.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual(['/Messages/0/Attachments', '/Messages/0/Headers', '/Messages/0/ReplyTo', '/Messages/0/Tags']);
    expect(await stored()).toHaveLength(0);
  });
});

async function statusOf(messageId: string, who: Tenant = tenant): Promise<Record<string, any>> {
  const until = Date.now() + 2_000;
  for (;;) {
    const { data } = await clientOf(stack, who.apiKey).POST('/v1.2/email/status', { body: { OrganizationId: who.organizationId, MessageIds: [messageId] } });
    const message = data!.Messages[0]!;
    if (message.Status === 'Delivered' || Date.now() > until) return message;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('tags come back', () => {
  it('in the status answer, and {} for a message without tags', async () => {
    const { data } = await sendMessages([{ Tags: { invoice: 'inv-7' } }, { To: ['bob@example.org'] }]);
    const [tagged, plain] = data!.Messages as { MessageId: string }[];
    expect(await statusOf(tagged!.MessageId)).toMatchObject({ Status: 'Delivered', Tags: { invoice: 'inv-7' } });
    expect(await statusOf(plain!.MessageId)).toMatchObject({ Status: 'Delivered', Tags: {} });
  });

  it("in every webhook payload's data", async () => {
    const received: Record<string, any>[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        received.push(JSON.parse(body) as Record<string, any>);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const owner = await provisionTenant(adminEnv(stack));
      await adminJson(adminEnv(stack), 'webhook', 'set', '--org', owner.organizationId, '--url', `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`);
      const { data } = await sendMessages([{ To: ['complaint@simulator.amazonses.com'], Tags: { order: 'o-1' } }], owner);
      const until = Date.now() + 3_000;
      while (received.length < 3 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 25));
      expect(received.map((event) => event.type).sort()).toEqual(['email.complained', 'email.delivered', 'email.sent']);
      for (const event of received) expect(event.data).toMatchObject({ MessageId: (data!.Messages[0] as { MessageId: string }).MessageId, Tags: { order: 'o-1' } });
    } finally {
      server.close();
    }
  });
});

describe('docs/message-content.md', () => {
  it('has a curl with an attachment that works as written against the local stack', async () => {
    const page = await readFile(new URL('../../docs/message-content.md', import.meta.url), 'utf8');
    // The page's curl reads the three variables `npm start` prints as export lines, as the README's does.
    const script = /```sh\n([\s\S]*?)```/.exec(page)![1]!;
    const dir = await mkdtemp(join(tmpdir(), 'message-content-'));
    try {
      const pdf = randomBytes(50_000);
      const logo = randomBytes(500);
      await writeFile(join(dir, 'invoice.pdf'), pdf);
      await writeFile(join(dir, 'logo.png'), logo);
      const demo = stack.demo!;
      const { stdout } = await promisify(execFile)('sh', ['-c', script], { cwd: dir, env: { PATH: process.env.PATH, BASE_URL: stack.apiUrl, API_KEY: demo.apiKey, ORGANIZATION_ID: demo.organizationId } });
      expect(JSON.parse(stdout)).toMatchObject({ Messages: [{ Index: 0, Status: 'Sent' }] });
      const [email] = await stored();
      expect(Buffer.from(email!.attachments[0].content, 'base64').equals(pdf)).toBe(true);
      expect(email!.attachments[1]).toMatchObject({ contentId: 'logo', contentDisposition: 'INLINE', contentType: 'image/png' });
      expect(Buffer.from(email!.attachments[1].content, 'base64').equals(logo)).toBe(true);
      expect(email!.tags).toEqual({ invoice: '2026-0042', customer: 'c_981' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the mail viewer', () => {
  it('lists each message\'s custom headers and tags beside reply-to and attachments', async () => {
    const page = await (await fetch(stack.viewerUrl!)).text();
    expect(page).toContain('<b>Headers:</b>');
    expect(page).toContain('<b>Tags:</b>');
    expect(page).toContain('<b>Reply to:</b>');
    expect(page).toContain('<b>Attachments:</b>');
  });
});

describe('sizes', () => {
  const LIMIT = 5 * 1024 * 1024;
  const withFile = (file: Buffer) => messageBody(tenant.organizationId, { Attachments: [{ FileName: 'big.pdf', Content: file.toString('base64') }] });
  /** The largest file whose request fits the default body limit exactly (base64: 4 characters for 3 bytes). */
  const largest = () => Math.floor((LIMIT - JSON.stringify(withFile(Buffer.alloc(0))).length) / 4) * 3;

  it('sends the largest attachment that fits the default 5 MiB body, byte for byte', async () => {
    const file = randomBytes(largest());
    expect(file.length).toBeGreaterThan(3_900_000);
    expect(JSON.stringify(withFile(file)).length).toBeLessThanOrEqual(LIMIT);
    const { response } = await sendMessages([{ Attachments: [{ FileName: 'big.pdf', Content: file.toString('base64') }] }]);
    expect(response.status).toBe(200);
    const [email] = await stored();
    expect(Buffer.from(email!.attachments[0].content, 'base64').equals(file)).toBe(true);
  });

  it('answers 413 to three bytes more, before looking the key up, and sends nothing', async () => {
    const body = withFile(randomBytes(largest() + 3));
    await expectProblem(await send(stack, tenant.apiKey, body), 413);
    await expectProblem(await send(stack, generateApiKey(), body), 413);
    expect(await stored()).toHaveLength(0);
  });
});
