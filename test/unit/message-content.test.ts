import { beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import libmime from 'libmime';
import { isStrictBase64 } from '../../functions/send/message-content';
import { extensionOf, UNSUPPORTED_EXTENSIONS } from '../../functions/send/file-names';
import { loadMessageContent } from '../../functions/send/content-fields';
import { loadContentTypes } from '../../functions/send/content-types';
import { validateSendRequest } from '../../functions/send/validation';
import { CONTROL_CHARACTERS } from '../../functions/shared/domain/header-safety';
import { ValidationProblem } from '../../functions/shared/http/problems';
import type { OutgoingEmail } from '../../functions/shared/mail/ports';
import { encodeHeaderValue, toSendEmailRequest } from '../../functions/shared/mail/ses-message';

// The send path loads the section 12 rules and the extension table before validating a request that
// needs them (functions/send/content-fields.ts, content-types.ts).
beforeAll(() => Promise.all([loadMessageContent(), loadContentTypes()]));

const ORG = '5f0c7c2e-8d1c-4a55-9a8e-0c3f5e2b9a10';
const msg = (overrides: Record<string, unknown> = {}) => ({ To: ['a@example.org'], From: 'noreply@example.com', Subject: 'Hi', TextContent: 'Body', ...overrides });
const validate = (overrides: Record<string, unknown>) => validateSendRequest({ OrganizationId: ORG, Messages: [msg(overrides)] }, { maxMessages: 100 }).messages[0]!;

function problems(overrides: Record<string, unknown>): [string, string][] {
  try {
    validate(overrides);
  } catch (error) {
    if (error instanceof ValidationProblem) return (error.errors ?? []).map((p) => [p.pointer, p.detail]);
    throw error;
  }
  throw new Error('expected a ValidationProblem');
}
const pointers = (overrides: Record<string, unknown>) => problems(overrides).map(([pointer]) => pointer);

describe('isStrictBase64', () => {
  it.each([
    ['', true],
    ['AAAA', true],
    ['AAE=', true],
    ['AA==', true],
    ['AB==', false], // unused bits set: another string means the same bytes
    ['AAF=', false],
    ['AAA', false], // not whole quanta
    ['AAAA\nAAAA', false],
    ['AA-_', false], // the URL-safe alphabet
    ['A===', false],
    ['AA=A', false],
    ['====', false],
  ])('%j → %s', (text, valid) => {
    expect(isStrictBase64(text)).toBe(valid);
  });

  it('checks megabytes without exhausting the stack', () => {
    expect(isStrictBase64(Buffer.alloc(6_000_000, 7).toString('base64'))).toBe(true);
  });
});

describe('extensionOf', () => {
  it.each([
    ['invoice.PDF', 'pdf'],
    ['run.exe. ', 'exe'],
    ['archive.tar.gz', 'gz'],
    ['.exe', 'exe'],
    ['setup.exe\u00a0', 'exe'],
    ['setup.exe.\u3000', 'exe'],
    ['a.exe\u2800', 'exe'],
    ['README', undefined],
    ['...', undefined],
  ])('%j → %s', (name, extension) => {
    expect(extensionOf(name)).toBe(extension);
  });

  it('knows every type of the SES list the contract names', () => {
    for (const extension of ['exe', 'bat', 'js', 'vbs', 'ps1', 'msi', 'scr', 'jse']) expect(UNSUPPORTED_EXTENSIONS.has(extension)).toBe(true);
    for (const extension of ['pdf', 'png', 'csv', 'zip', 'docx', 'ics']) expect(UNSUPPORTED_EXTENSIONS.has(extension)).toBe(false);
  });
});

describe('validateSendRequest: section 12 fields', () => {
  it('keeps a message without them exactly as before, and leaves null or empty ones out', () => {
    expect(Object.keys(validate({}))).toEqual(Object.keys(validate({ ReplyTo: null, Headers: {}, Tags: null, Attachments: [] })));
    expect(validate({ Headers: {}, Tags: {}, Attachments: [] })).not.toHaveProperty('headers');
  });

  it('normalises what it keeps: Punycode reply-to, content types from the extension, inline by content id', () => {
    const message = validate({
      ReplyTo: ['x@Bücher.DE'],
      Headers: { 'X-Ref': 'r-1' },
      Tags: { a: 'b' },
      Attachments: [
        { FileName: 'a.PDF', Content: 'AAAA' },
        { FileName: 'a', Content: 'AAAA' },
        { FileName: 'logo.png', Content: 'AAAA', ContentType: 'Image/PNG', ContentId: 'logo' },
      ],
    });
    expect(message).toMatchObject({
      replyTo: ['x@xn--bcher-kva.de'],
      headers: [{ name: 'X-Ref', value: 'r-1' }],
      tags: { a: 'b' },
      attachments: [
        { fileName: 'a.PDF', contentType: 'application/pdf' },
        { fileName: 'a', contentType: 'application/octet-stream' },
        { fileName: 'logo.png', contentType: 'image/png', contentId: 'logo' },
      ],
    });
  });

  it.each([
    ['ReplyTo empty', { ReplyTo: [] }, ['/Messages/0/ReplyTo']],
    ['ReplyTo not a list', { ReplyTo: 'a@example.com' }, ['/Messages/0/ReplyTo']],
    ['Headers a list', { Headers: [] }, ['/Messages/0/Headers']],
    ['a Content-* header', { Headers: { 'Content-Transfer-Encoding': 'x' } }, ['/Messages/0/Headers/Content-Transfer-Encoding']],
    ['every reserved header, any case', { Headers: { from: 'a', TO: 'a', cc: 'a', bcc: 'a', subject: 'a', date: 'a', 'message-id': 'a', 'Mime-Version': 'a', 'return-path': 'a', 'dkim-signature': 'a', received: 'a' } }, 11],
    ['two names one field', { Headers: { 'X-A': '1', 'x-a': '2' } }, ['/Messages/0/Headers/x-a']],
    ['a name with a colon', { Headers: { 'X:A': '1' } }, ['/Messages/0/Headers/X:A']],
    ['a 77-character name', { Headers: { [`X-${'a'.repeat(75)}`]: '1' } }, [`/Messages/0/Headers/X-${'a'.repeat(75)}`]],
    ['an empty value', { Headers: { 'X-A': '' } }, ['/Messages/0/Headers/X-A']],
    ['a tab', { Headers: { 'X-A': 'a\tb' } }, ['/Messages/0/Headers/X-A']],
    ['a value of 999 characters', { Headers: { 'X-A': 'a'.repeat(999) } }, ['/Messages/0/Headers/X-A']],
    ['a number', { Headers: { 'X-A': 1 } }, ['/Messages/0/Headers/X-A']],
    ['a structured field with 998 characters and no space, which could not fold', { Headers: { 'List-Unsubscribe': `<https://example.com/${'u'.repeat(976)}>` } }, ['/Messages/0/Headers/List-Unsubscribe']],
    ['a refused name, pointer-escaped', { Headers: { 'Content-/~': 'x' } }, ['/Messages/0/Headers/Content-~1~0']],
    ['the service tag in another case', { Tags: { organizationid: 'x' } }, ['/Messages/0/Tags/organizationid']],
    ['the tags the service sets on a templated or scheduled message', { Tags: { TemplateName: 'x', templateversion: '1', ScheduleId: 'x' } }, ['/Messages/0/Tags/TemplateName', '/Messages/0/Tags/templateversion', '/Messages/0/Tags/ScheduleId']],
    ['a tag value of 257 characters', { Tags: { a: 'b'.repeat(257) } }, ['/Messages/0/Tags/a']],
    ['a tag value that is a number', { Tags: { a: 1 } }, ['/Messages/0/Tags/a']],
    ['Attachments an object', { Attachments: {} }, ['/Messages/0/Attachments']],
    ['an attachment without fields', { Attachments: [{}] }, ['/Messages/0/Attachments/0/FileName', '/Messages/0/Attachments/0/Content']],
    ['an unknown attachment field', { Attachments: [{ FileName: 'a.txt', Content: 'AAAA', Disposition: 'inline' }] }, ['/Messages/0/Attachments/0/Disposition']],
    ['a file name with a backslash', { Attachments: [{ FileName: 'a\\b.txt', Content: 'AAAA' }] }, ['/Messages/0/Attachments/0/FileName']],
    ['a file name of 256 characters', { Attachments: [{ FileName: `${'a'.repeat(252)}.txt`, Content: 'AAAA' }] }, ['/Messages/0/Attachments/0/FileName']],
    ['empty content', { Attachments: [{ FileName: 'a.txt', Content: '' }] }, ['/Messages/0/Attachments/0/Content']],
    ['a content id with angle brackets', { Attachments: [{ FileName: 'a.png', Content: 'AAAA', ContentId: '<logo>' }] }, ['/Messages/0/Attachments/0/ContentId']],
    ['two attachments with one content id', { Attachments: [{ FileName: 'a.png', Content: 'AAAA', ContentId: 'x' }, { FileName: 'b.png', Content: 'AAAA', ContentId: 'x' }] }, ['/Messages/0/Attachments/1/ContentId']],
    ['a file name that is only a refused extension', { Attachments: [{ FileName: '.exe', Content: 'AAAA' }, { FileName: '.JS', Content: 'AAAA' }] }, ['/Messages/0/Attachments/0/FileName', '/Messages/0/Attachments/1/FileName']],
    ['a refused extension behind blanks that show as spaces', { Attachments: [{ FileName: 'setup.exe\u00a0', Content: 'AAAA' }, { FileName: 'a.exe\u202f', Content: 'AAAA' }] }, ['/Messages/0/Attachments/0/FileName', '/Messages/0/Attachments/1/FileName']],
    ['a refused extension behind an NTFS stream name', { Attachments: [{ FileName: 'setup.exe::$DATA', Content: 'AAAA' }] }, ['/Messages/0/Attachments/0/FileName']],
    ['a refused extension behind code points drawn as nothing', { Attachments: ['\u034f', '\ufe0f', '\u{E0100}', '\u3164', '\u115f', '\uffa0', '\u180b'].map((hidden) => ({ FileName: `a.exe${hidden}`, Content: 'AAAA' })) }, 7],
    ['a content type without subtype', { Attachments: [{ FileName: 'a.png', Content: 'AAAA', ContentType: 'image' }] }, ['/Messages/0/Attachments/0/ContentType']],
  ])('refuses %s', (_label, overrides, expected) => {
    const found = pointers(overrides);
    if (typeof expected === 'number') expect(found).toHaveLength(expected);
    else expect(found).toEqual(expected);
  });

  it('takes ordinary names that hold variation selectors, a colon or a leading dot', () => {
    const names = ['I \u2764\ufe0f NY.jpg', '\u2600\ufe0f summer.png', '\u845b\u{E0100}\u57ce.pdf', '\u182e\u180b\u1823.txt', 'example.com: invoice.pdf', 'report:2024.pdf', '.htaccess', 'a.exe\u034f.txt'];
    expect(validate({ Attachments: names.map((FileName) => ({ FileName, Content: 'AAAA' })) }).attachments!.map((a) => a.fileName)).toEqual(names);
  });

  it('takes the limits themselves: 50 headers, a 998-character value, 10 tags of 256 characters, 10 attachments, 10 reply-to addresses', () => {
    const message = validate({
      ReplyTo: Array.from({ length: 10 }, (_, i) => `r${i}@example.com`),
      Headers: { ...Object.fromEntries(Array.from({ length: 49 }, (_, i) => [`X-H${i}`, 'v'])), 'X-Long': 'é'.repeat(998) },
      Tags: Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`${i}`.padEnd(256, 't'), 'v'.repeat(256)])),
      Attachments: Array.from({ length: 10 }, (_, i) => ({ FileName: `f${i}.txt`, Content: 'AAAA' })),
    });
    expect(message.headers).toHaveLength(50);
    expect(Object.keys(message.tags!)).toHaveLength(10);
    expect(message.attachments).toHaveLength(10);
  });

  it('refuses a tag named __proto__, as JSON.parse gives it, rather than sending a tag it could never echo', () => {
    const parsed = JSON.parse('{"Tags": {"__proto__": "abc", "b": "c"}}') as Record<string, unknown>;
    expect(problems(parsed)).toEqual([['/Messages/0/Tags/__proto__', expect.stringContaining('cannot be echoed back')]]);
    // Another case of the name is an ordinary key, kept and echoed like any other.
    expect(Object.entries(validate(JSON.parse('{"Tags": {"__PROTO__": "abc"}}') as Record<string, unknown>).tags ?? {})).toEqual([['__PROTO__', 'abc']]);
  });

  it('names the SES-refused file type in its problem', () => {
    expect(problems({ Attachments: [{ FileName: 'x.vbs', Content: 'AAAA' }] })).toEqual([['/Messages/0/Attachments/0/FileName', expect.stringContaining('".vbs"')]]);
  });
});

const email: OutgoingEmail = { organizationId: ORG, from: 'noreply@example.com', to: ['a@example.org'], cc: [], bcc: [], subject: 'Hi', text: 'Body' };

describe('toSendEmailRequest', () => {
  it('maps a message without section 12 fields as before: Simple content, the Organization tag, nothing else', async () => {
    const input = await toSendEmailRequest(email);
    expect(input).toEqual({
      FromEmailAddress: 'noreply@example.com',
      Destination: { ToAddresses: ['a@example.org'] },
      EmailTags: [{ Name: 'OrganizationId', Value: ORG }],
      Content: { Simple: { Subject: { Data: 'Hi', Charset: 'UTF-8' }, Body: { Text: { Data: 'Body', Charset: 'UTF-8' } } } },
    });
  });

  it('sends attachments decoded, inline ones with their content id, reply-to, encoded headers and the client\'s tags after the service\'s', async () => {
    const input = await toSendEmailRequest({
      ...email,
      replyTo: ['r@example.com'],
      headers: [{ name: 'X-Greeting', value: 'Grüße' }, { name: 'List-Unsubscribe', value: '<mailto:u@example.com>' }],
      tags: { invoice: 'inv-1' },
      attachments: [
        { fileName: 'a.pdf', content: 'AAEC', contentType: 'application/pdf' },
        { fileName: 'logo.png', content: 'AAAA', contentType: 'image/png', contentId: 'logo' },
      ],
    });
    expect(input.ReplyToAddresses).toEqual(['r@example.com']);
    expect(input.EmailTags).toEqual([{ Name: 'OrganizationId', Value: ORG }, { Name: 'invoice', Value: 'inv-1' }]);
    const simple = input.Content!.Simple!;
    expect(simple.Headers![1]).toEqual({ Name: 'List-Unsubscribe', Value: '<mailto:u@example.com>' });
    expect(libmime.decodeWords(simple.Headers![0]!.Value!)).toBe('Grüße');
    expect(simple.Attachments!.map((a) => [a.FileName, a.ContentType, a.ContentDisposition, a.ContentId, Buffer.from(a.RawContent!).toString('hex')])).toEqual([
      ['a.pdf', 'application/pdf', 'ATTACHMENT', undefined, '000102'],
      ['logo.png', 'image/png', 'INLINE', 'logo', '000000'],
    ]);
  });

  it('composes Raw MIME only past Simple content\'s header limits: 16 fields, or a value over 870 characters once encoded', async () => {
    const headers = (n: number, value = 'v') => Array.from({ length: n }, (_, i) => ({ name: `X-H${i}`, value }));
    expect((await toSendEmailRequest({ ...email, headers: headers(15) })).Content).toHaveProperty('Simple');
    expect((await toSendEmailRequest({ ...email, headers: headers(1, 'a'.repeat(870)) })).Content).toHaveProperty('Simple');
    const raw = await toSendEmailRequest({ ...email, bcc: ['hidden@example.net'], headers: headers(16) });
    expect(raw.Destination?.BccAddresses).toEqual(['hidden@example.net']);
    const mime = Buffer.from(raw.Content!.Raw!.Data!).toString();
    expect(mime).toContain('X-H15: v');
    expect(mime).not.toContain('hidden@example.net');
    // 300 non-ASCII characters are fewer than 998, but far over 870 once encoded.
    const long = await toSendEmailRequest({ ...email, headers: [{ name: 'X-Long', value: 'ü'.repeat(300) }] });
    expect(long.Content).toHaveProperty('Raw');
    expect(long.EmailTags).toEqual([{ Name: 'OrganizationId', Value: ORG }]);
  });

  it('composes Raw MIME with no line over 998 characters, a 998-character value or subject without a space included, and the same text decoded', async () => {
    const headers = [...Array.from({ length: 15 }, (_, i) => ({ name: `X-H${i}`, value: 'v' })), { name: 'X-Long', value: 'a'.repeat(998) }, { name: 'References', value: `<${'r'.repeat(500)}@example.com> <${'s'.repeat(480)}@example.com>` }];
    const raw = await toSendEmailRequest({ ...email, subject: 's'.repeat(998), headers });
    const mime = Buffer.from(raw.Content!.Raw!.Data!).toString();
    expect(mime.split('\r\n').filter((line) => line.length > 998)).toEqual([]);
    const unfolded = (name: string) => new RegExp(`^${name}:(.*(?:\r\n[ \t].*)*)`, 'm').exec(mime)![1]!.replace(/\r\n[ \t]/g, ' ').trim();
    expect(libmime.decodeWords(unfolded('X-Long'))).toBe('a'.repeat(998));
    expect(libmime.decodeWords(unfolded('Subject'))).toBe('s'.repeat(998));
    // A value that folds at its spaces goes as it was, a structured one too: never as encoded-words.
    expect(unfolded('X-H0')).toBe('v');
    expect(unfolded('References')).toBe(headers.at(-1)!.value);
  });

  it('tags a scheduled message with its ScheduleId, after the Organization and before the client\'s tags', async () => {
    const scheduleId = '0b6c5a3e-2f4d-4e8a-9c1b-7d2e3f4a5b6c';
    const input = await toSendEmailRequest({ ...email, scheduleId, tags: { invoice: 'inv-1' } });
    expect(input.EmailTags).toEqual([{ Name: 'OrganizationId', Value: ORG }, { Name: 'ScheduleId', Value: scheduleId }, { Name: 'invoice', Value: 'inv-1' }]);
  });
});

describe('encodeHeaderValue', () => {
  it('leaves printable ASCII alone and encodes only the words that need it, on one line', () => {
    expect(encodeHeaderValue('<https://example.com/u?id=1>, <mailto:u@example.com>')).toBe('<https://example.com/u?id=1>, <mailto:u@example.com>');
    const encoded = encodeHeaderValue(`Grüße ${'ä'.repeat(100)} <x@example.com>`);
    expect(encoded).toMatch(/^[\x20-\x7e]+$/);
    expect(encoded).toContain('<x@example.com>');
    expect(libmime.decodeWords(encoded)).toBe(`Grüße ${'ä'.repeat(100)} <x@example.com>`);
  });
});

describe('valid values in the four fields, by construction (property)', () => {
  const alnum = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'.split(''));
  const word = (max: number) => fc.string({ unit: alnum, minLength: 1, maxLength: max });
  const address = fc.tuple(word(12), word(12)).map(([local, domain]) => `${local}@${domain}.example`);
  /** Any text a header may hold: printable ASCII, or any grapheme but the controls the service refuses. */
  const headerValue = fc
    .oneof(fc.string({ unit: fc.constantFrom(...Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i))), minLength: 1, maxLength: 120 }), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 400 }))
    .filter((text) => !CONTROL_CHARACTERS.test(text) && text.trim() !== '');
  // Names of their own (X-…), unique whatever their case.
  // Few (Simple content) or more than Simple content takes (Raw MIME), in about equal measure.
  const headerEntries = (minLength: number, maxLength: number) => fc.uniqueArray(fc.tuple(word(20), headerValue), { minLength, maxLength, selector: ([name]) => name.toLowerCase() });
  const headers = fc.oneof(headerEntries(0, 8), headerEntries(16, 30)).map((entries) => Object.fromEntries(entries.map(([name, value]) => [`X-${name}`, value])));
  const tags = fc.uniqueArray(fc.tuple(word(20), word(40)), { maxLength: 9, selector: ([name]) => name.toLowerCase() }).map((entries) => Object.fromEntries(entries.map(([name, value]) => [`t${name}`, value])));
  const attachment = fc.record({
    FileName: fc.tuple(word(20), fc.constantFrom('pdf', 'png', 'txt', 'csv')).map(([name, extension]) => `${name}.${extension}`),
    Content: fc.uint8Array({ minLength: 1, maxLength: 60 }).map((bytes) => Buffer.from(bytes).toString('base64')),
  });
  const fields = fc.record(
    { ReplyTo: fc.array(address, { minLength: 1, maxLength: 10 }), Headers: headers, Tags: tags, Attachments: fc.array(attachment, { minLength: 1, maxLength: 10 }) },
    { requiredKeys: [] },
  );

  it('is taken, and sent with printable ASCII header values in Simple or Raw content; each branch is exercised', async () => {
    const seen = { nonAscii: 0, simple: 0, raw: 0, replyTo: 0, tags: 0, attachments: 0 };
    await fc.assert(
      fc.asyncProperty(fields, async (given) => {
        // By construction every value is valid: a refusal here is a failure.
        const message = validate(given);
        const input = await toSendEmailRequest({ ...email, ...message, organizationId: ORG, from: message.from.ascii });
        if (Object.values(given.Headers ?? {}).some((value) => /[^\x20-\x7e]/.test(value))) seen.nonAscii++;
        if (given.ReplyTo) seen.replyTo++;
        if (given.Tags && Object.keys(given.Tags).length > 0) seen.tags++;
        if (given.Attachments) seen.attachments++;
        if (input.Content?.Raw) {
          seen.raw++;
          const mime = Buffer.from(input.Content.Raw.Data!).toString('latin1');
          const head = mime.slice(0, mime.indexOf('\r\n\r\n'));
          // Header lines, folded or not, are printable ASCII only.
          for (const line of head.split('\r\n')) expect(line).toMatch(/^[\x20-\x7e\t]*$/);
        } else {
          seen.simple++;
          for (const header of input.Content?.Simple?.Headers ?? []) expect(header.Value).toMatch(/^[\x20-\x7e]+$/);
        }
      }),
      { numRuns: 300 },
    );
    // The branches the assertions above are about each ran in a fair share of the 300.
    for (const [branch, runs] of Object.entries(seen)) expect([branch, runs >= 30]).toEqual([branch, true]);
  });
});

describe('any value in the four fields (property)', () => {
  const anyValue = fc.oneof(
    fc.jsonValue(),
    fc.dictionary(fc.string({ maxLength: 12 }), fc.string({ unit: 'grapheme', maxLength: 40 }), { maxKeys: 20 }),
    fc.array(fc.record({ FileName: fc.string({ maxLength: 20 }), Content: fc.base64String({ maxLength: 40 }), ContentType: fc.constantFrom(undefined, 'image/png', 'x'), ContentId: fc.option(fc.string({ maxLength: 10 }), { nil: undefined }) }, { requiredKeys: [] }), { maxLength: 12 }),
  );

  it('is either refused with a ValidationProblem or sent with printable ASCII headers, never anything else', async () => {
    await fc.assert(
      fc.asyncProperty(fc.record({ ReplyTo: anyValue, Headers: anyValue, Tags: anyValue, Attachments: anyValue }, { requiredKeys: [] }), async (fields) => {
        let message;
        try {
          message = validate(fields);
        } catch (error) {
          expect(error).toBeInstanceOf(ValidationProblem);
          return;
        }
        const input = await toSendEmailRequest({ ...email, ...message, organizationId: ORG, from: message.from.ascii });
        for (const header of input.Content?.Simple?.Headers ?? []) expect(header.Value).toMatch(/^[\x20-\x7e]+$/);
      }),
      { numRuns: 300 },
    );
  });
});
