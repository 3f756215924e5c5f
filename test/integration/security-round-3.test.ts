/**
 * Security audit, third round (docs/security.md), through the real send handler, dynalite and the
 * SES emulator, as a client sees it: headers that name a sender or instruct a mail system are
 * refused on both composition paths (findings 1, 2), the suppression list compares mailboxes, not
 * spellings (finding 3), and attachments cannot disguise their extension or smuggle MIME
 * containers (findings 7, 8). Nothing of a refused request is ever sent.
 */
import { beforeEach, describe, expect, it } from '@jest/globals';
import { createDynamoDbClient } from '../../functions/shared/runtime/clients';
import { DynamoDbSuppressionStore } from '../../functions/shared/store/dynamodb-suppression-store';
import type { Harness, Tenant } from '../support/harness';
import { authorised, message, sendBody, useHarness } from '../support/harness';

let h!: Harness;
let tenant!: Tenant;

useHarness((harness, first) => {
  h = harness;
  tenant = first;
});
beforeEach(async () => h.clearEmails());

const suppressionList = () => new DynamoDbSuppressionStore(createDynamoDbClient(h.config), h.config.tableName);
const send = (messages: unknown[], who: Tenant = tenant) => h.invoke({ headers: authorised(who), body: sendBody(who, messages) });
/** 16 harmless fields: past 15 the service composes raw MIME instead of SES Simple content. */
const filler = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`X-Filler-${i}`, 'v']));
const pointers = (body: { errors: { pointer: string }[] }) => body.errors.map((e) => e.pointer).sort();

describe('headers that name a sender or instruct a mail system (findings 1 and 2)', () => {
  const impersonating = ['Sender', 'sender', 'SENDER', 'Resent-From', 'resent-sender', 'Resent-To', 'RESENT-MESSAGE-ID'];
  const instructing = ['X-SES-CONFIGURATION-SET', 'x-ses-message-tags', 'X-SES-SOURCE-ARN', 'X-SES-FROM-ARN', 'X-SES-RETURN-PATH-ARN', 'Authentication-Results', 'ARC-Seal', 'arc-message-signature', 'ARC-Authentication-Results', 'DomainKey-Signature'];

  it.each([
    ['SES Simple content (few headers)', {}],
    ['raw MIME (past 15 headers)', filler],
  ])('refuses each, in any case, naming it, and sends none of the batch: %s', async (_path, extra) => {
    const names = [...impersonating, ...instructing];
    const result = await send([message(), message({ Headers: { ...extra, ...Object.fromEntries(names.map((name) => [name, 'ceo@beta.test'])) } })]);
    expect(result.statusCode).toBe(400);
    expect(pointers(result.body)).toEqual(names.map((name) => `/Messages/1/Headers/${name}`).sort());
    expect(result.body.errors.find((e: { pointer: string }) => e.pointer === '/Messages/1/Headers/Sender').detail).toMatch(/names a sender/);
    expect(await h.sentEmails()).toHaveLength(0);
  });

  it('still sends look-alike names that are none of them', async () => {
    const headers = { 'X-Sender-Ref': 'a', 'X-SESSION': 'b', 'List-Unsubscribe': '<mailto:u@example.com>', 'X-ARC': 'c', Resent: 'd' };
    const result = await send([message({ Headers: headers })]);
    expect(result.statusCode).toBe(200);
    expect(result.body.Messages[0].Status).toBe('Sent');
    const [email] = (await h.sentEmails()) as unknown as { headers: { name: string }[] }[];
    expect(email!.headers.map((header) => header.name)).toEqual(expect.arrayContaining(['X-Sender-Ref', 'X-SESSION', 'X-ARC', 'Resent']));
  });
});

describe('suppression compares the mailbox, not its spelling (finding 3)', () => {
  const spellings = ['"bounce+sq"@simulator.amazonses.com', '"bounce+\\sq"@simulator.amazonses.com', '"Bounce+SQ"@Simulator.AmazonSES.com', 'BOUNCE+sq@simulator.amazonses.com'];

  it.each(['Bounce', 'Complaint'] as const)('a mailbox suppressed after a %s is suppressed in every spelling, and nothing goes to it', async (reason) => {
    const who = await h.tenant();
    const list = suppressionList();
    await list.add(who.organizationId, [{ address: 'bounce+sq@simulator.amazonses.com', reason, at: new Date().toISOString() }]);
    for (const to of spellings) {
      const result = await send([message({ To: [to] })], who);
      expect(result.body.Messages[0]).toMatchObject({ Status: 'Failed', Error: { Code: 'Suppressed' }, Suppressed: [to.replace(/@.*$/, (domain) => domain.toLowerCase())] });
    }
    expect(await h.sentEmails()).toHaveLength(0);
  });

  it('an address suppressed in a quoted spelling (as an event may report it) stops the plain one', async () => {
    const who = await h.tenant();
    const list = suppressionList();
    await list.add(who.organizationId, [{ address: '"b\\ob"@Example.org', reason: 'Bounce', at: new Date().toISOString() }]);
    expect(await list.list(who.organizationId)).toEqual([expect.objectContaining({ address: 'bob@example.org' })]);
    const result = await send([message({ To: ['bob@example.org', 'carol@example.org'] })], who);
    expect(result.statusCode).toBe(200);
    expect(result.body.Messages[0].Suppressed).toEqual(['bob@example.org']);
    const [email] = await h.sentEmails();
    expect(JSON.stringify(email)).not.toContain('bob@example.org');
  });

  it('a quoted local part that needs its quotes stays a mailbox of its own', async () => {
    const who = await h.tenant();
    const list = suppressionList();
    await list.add(who.organizationId, [{ address: 'john.smith@example.org', reason: 'Bounce', at: new Date().toISOString() }]);
    const result = await send([message({ To: ['"john smith"@example.org'] })], who);
    expect(result.statusCode).toBe(200);
    expect(result.body.Messages[0].Status).toBe('Sent');
  });
});

describe('attachments (findings 7 and 8)', () => {
  const file = (FileName: string, ContentType?: string) => ({ FileName, Content: 'JVBERi0=', ...(ContentType && { ContentType }) });

  const marks = [0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x200e, 0x200f, 0x061c, 0x200b, 0xfeff];
  it.each(marks.map((code) => [code.toString(16).toUpperCase().padStart(4, '0'), String.fromCodePoint(code)]))(
    'refuses a FileName holding U+%s (a disguised extension), and sends nothing',
    async (_code, mark) => {
      const result = await send([message(), message({ Attachments: [file(`invoice${mark}fdp.zip`)] })]);
      expect(result.statusCode).toBe(400);
      expect(pointers(result.body)).toEqual(['/Messages/1/Attachments/0/FileName']);
      expect(result.body.errors[0].detail).toMatch(/bidirectional/);
      expect(await h.sentEmails()).toHaveLength(0);
    },
  );

  it.each(['multipart/mixed', 'Multipart/Alternative', 'message/rfc822', 'MESSAGE/partial', 'message/global'])('refuses ContentType %s on both paths, and sends nothing', async (type) => {
    for (const Headers of [undefined, filler]) {
      const result = await send([message(), message({ Headers, Attachments: [file('a.bin', type)] })]);
      expect(result.statusCode).toBe(400);
      expect(pointers(result.body)).toEqual(['/Messages/1/Attachments/0/ContentType']);
    }
    expect(await h.sentEmails()).toHaveLength(0);
  });

  it('sends a .eml file as application/octet-stream (base64), not message/rfc822', async () => {
    const result = await send([message({ Attachments: [file('forwarded.eml')] })]);
    expect(result.statusCode).toBe(200);
    const [email] = (await h.sentEmails()) as unknown as { attachments: { filename: string; contentType: string }[] }[];
    expect(email!.attachments).toEqual([expect.objectContaining({ filename: 'forwarded.eml', contentType: 'application/octet-stream' })]);
  });
});

describe('attacks that held, kept held', () => {
  it('refuses CR, LF, folding, U+2028, U+2029 and U+0085 in header values, on both paths, and sends nothing', async () => {
    const values = ['a\rBcc: x@evil.test', 'a\nBcc: x@evil.test', 'a\r\n Bcc: x@evil.test', 'a\u2028Bcc: x@evil.test', 'a\u2029b', 'a\u0085b'];
    for (const extra of [{}, filler]) {
      const headers = { ...extra, ...Object.fromEntries(values.map((value, i) => [`X-Value-${i}`, value])) };
      const result = await send([message({ Headers: headers })]);
      expect(result.statusCode).toBe(400);
      expect(pointers(result.body)).toEqual(values.map((_, i) => `/Messages/0/Headers/X-Value-${i}`).sort());
    }
    expect(await h.sentEmails()).toHaveLength(0);
  });

  it('keeps a daily quota of 5 under 12 concurrent one-message requests: exactly 5 sent, the rest QuotaExceeded', async () => {
    const who = await h.tenant();
    await h.admin.limits.set(who.organizationId, { daily: 5 });
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => send([message({ To: [`quota-${i}@example.org`] })], who)));
    const statuses = results.map((result) => result.body.Messages[0].Status ?? result.body.Messages[0].Error?.Code);
    expect(statuses.filter((status) => status === 'Sent')).toHaveLength(5);
    expect(results.filter((result) => result.statusCode === 429).map((result) => result.body.Messages[0].Error.Code)).toEqual(Array(7).fill('QuotaExceeded'));
    expect(await h.sentEmails()).toHaveLength(5);
  });
});
