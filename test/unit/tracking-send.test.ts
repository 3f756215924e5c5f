import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { resolveMessageTracking } from '../../functions/send/tracking';
import { validateSendRequest } from '../../functions/send/validation';
import { problemsOf as problemsIn } from '../support/send-validation';
import { markNoTrack } from '../../functions/shared/mail/no-track';
import type { OutgoingEmail } from '../../functions/shared/mail/ports';
import { toSendEmailRequest } from '../../functions/shared/mail/ses-message';
import { NO_TRACKING, readTracking, resolveTracking } from '../../functions/shared/mail/tracking';
import { rewriteHtml } from '../../infra/local/tracking-rewrite';

const ORG = '5f0c7c2e-8d1c-4a55-9a8e-0c3f5e2b9a10';
const limits = { maxMessages: 100 };
const msg = (overrides: Record<string, unknown> = {}) => ({ To: ['a@example.org'], From: 'noreply@example.com', Subject: 'Hi', HtmlContent: '<p>x</p>', ...overrides });

const problemsOf = (body: unknown) => problemsIn(body, limits);

describe('Tracking on a message', () => {
  it.each([
    ['a string', 'yes', '/Messages/0/Tracking'],
    ['an array', [true], '/Messages/0/Tracking'],
    ['a boolean', true, '/Messages/0/Tracking'],
    ['a string switch', { Opens: 'true' }, '/Messages/0/Tracking/Opens'],
    ['a number switch', { Clicks: 1 }, '/Messages/0/Tracking/Clicks'],
    ['an unknown field', { Opens: true, Pixel: true }, '/Messages/0/Tracking/Pixel'],
    ['a lower-case field', { opens: true }, '/Messages/0/Tracking/opens'],
  ])('refuses %s with the pointer to it', (_label, tracking, pointer) => {
    expect(problemsOf({ OrganizationId: ORG, Messages: [msg({ Tracking: tracking })] }).map((p) => p.pointer)).toEqual([pointer]);
  });

  it('fails the whole request for one message\'s bad Tracking, naming it among the others\' problems', () => {
    const problems = problemsOf({ OrganizationId: ORG, Messages: [msg({ Tracking: { Opens: true } }), msg({ Tracking: { Clicks: 'no' }, From: 'not an address' })] });
    expect(problems.map((p) => p.pointer)).toEqual(['/Messages/1/From', '/Messages/1/Tracking/Clicks']);
    expect(problems[1]!.detail).toBe('must be true or false');
  });

  it('keeps the choice as given, and nothing for a message without one (its idempotency fingerprint is unchanged)', () => {
    const request = validateSendRequest({ OrganizationId: ORG, Messages: [msg(), msg({ Tracking: { Clicks: true } }), msg({ Tracking: {} }), msg({ Tracking: null })] }, limits);
    expect(request.messages.map((m) => m.trackingChoice)).toEqual([undefined, { clicks: true }, {}, undefined]);
    expect(Object.keys(request.messages[0]!)).not.toContain('trackingChoice');
  });

  it('resolves each switch it leaves out to the Organization\'s default, and off where there is none', () => {
    fc.assert(
      fc.property(
        fc.option(fc.record({ opens: fc.option(fc.boolean(), { nil: undefined }), clicks: fc.option(fc.boolean(), { nil: undefined }) }, { requiredKeys: [] }), { nil: undefined }),
        fc.option(fc.record({ opens: fc.boolean(), clicks: fc.boolean() }), { nil: undefined }),
        (choice, organizationDefault) => {
          const resolved = resolveTracking(choice, organizationDefault);
          expect(resolved.opens).toBe(choice?.opens ?? organizationDefault?.opens ?? false);
          expect(resolved.clicks).toBe(choice?.clicks ?? organizationDefault?.clicks ?? false);
        },
      ),
      { seed: 3717, numRuns: 200 },
    );
  });

  it('drops the choice once resolved, so what is stored or sent carries only the resolved tracking', () => {
    const { messages } = validateSendRequest({ OrganizationId: ORG, Messages: [msg({ Tracking: { Opens: false } }), msg()] }, limits);
    const resolved = resolveMessageTracking(messages, { tracking: { opens: true, clicks: true } });
    expect(resolved.map((m) => m.tracking)).toEqual([{ opens: false, clicks: true }, { opens: true, clicks: true }]);
    expect(resolved.every((m) => !('trackingChoice' in m))).toBe(true);
    expect(resolveMessageTracking(messages, {}).map((m) => m.tracking)).toEqual([NO_TRACKING, NO_TRACKING]);
  });

  it('reads a stored default safely: anything but true is off', () => {
    expect(readTracking({ opens: true, clicks: true })).toEqual({ opens: true, clicks: true });
    expect(readTracking({ opens: 'true', clicks: 1 })).toEqual(NO_TRACKING);
    expect(readTracking('on')).toEqual(NO_TRACKING);
    expect(readTracking(undefined)).toEqual(NO_TRACKING);
  });
});

const email: OutgoingEmail = { organizationId: ORG, from: 'noreply@example.com', to: ['a@example.org'], cc: [], bcc: [], subject: 'Hi', html: '<a data-no-track href="https://x.example/">x</a>' };
const htmlOf = (input: Awaited<ReturnType<typeof toSendEmailRequest>>) => input.Content?.Simple?.Body?.Html?.Data;

describe('the SendEmail request of a tracked or untracked message', () => {
  it.each([
    [undefined, 'Base', 'Base'],
    [NO_TRACKING, 'Base', 'Base'],
    [{ opens: true, clicks: false }, 'Base', 'Base-track-opens'],
    [{ opens: false, clicks: true }, 'Base', 'Base-track-clicks'],
    [{ opens: true, clicks: true }, 'Base', 'Base-track-opens-clicks'],
    [{ opens: true, clicks: true }, undefined, 'track-opens-clicks'],
    [NO_TRACKING, undefined, undefined],
  ])('tracking %j through base %s names configuration set %s', async (tracking, base, expected) => {
    const input = await toSendEmailRequest({ ...email, ...(tracking && { tracking }) }, base);
    expect(input.ConfigurationSetName).toBe(expected);
  });

  it('leaves untracked HTML exactly as written, data-no-track and all', async () => {
    expect(htmlOf(await toSendEmailRequest(email, 'Base'))).toBe(email.html);
    expect(htmlOf(await toSendEmailRequest({ ...email, tracking: NO_TRACKING }, 'Base'))).toBe(email.html);
  });

  it('marks tracked HTML\'s data-no-track links for SES, in Simple and Raw content alike', async () => {
    const tracked = { ...email, tracking: { opens: false, clicks: true } };
    expect(htmlOf(await toSendEmailRequest(tracked, 'Base'))).toBe('<a ses:no-track href="https://x.example/">x</a>');
    const headers = Array.from({ length: 16 }, (_, i) => ({ name: `X-H${i}`, value: 'v' }));
    const raw = await toSendEmailRequest({ ...tracked, headers }, 'Base');
    const mime = Buffer.from(raw.Content?.Raw?.Data ?? new Uint8Array()).toString('utf8');
    expect(mime).toContain('ses:no-track');
    expect(mime).not.toContain('data-no-track');
  });
});

describe('markNoTrack', () => {
  it.each([
    ['<a href="https://a.example/" data-no-track>a</a>', '<a href="https://a.example/" ses:no-track>a</a>'],
    ['<A DATA-NO-TRACK="" HREF=https://a.example/>a</A>', '<A ses:no-track HREF=https://a.example/>a</A>'],
    ["<a title='1 > 0' data-no-track='yes' href=\"https://a.example/\">", '<a title=\'1 > 0\' ses:no-track href="https://a.example/">'],
    ['<area shape=rect data-no-track href="https://a.example/">', '<area shape=rect ses:no-track href="https://a.example/">'],
    ['<a\ndata-no-track\nhref="https://a.example/">', '<a\nses:no-track\nhref="https://a.example/">'],
  ])('marks %j', (html, expected) => {
    expect(markNoTrack(html)).toBe(expected);
  });

  it.each([
    ['text that mentions data-no-track', 'say data-no-track here <a href="https://a.example/">a</a>'],
    ['a value that holds it', '<a title="data-no-track" href="https://a.example/">a</a>'],
    ['another element', '<img data-no-track src="https://a.example/i.png">'],
    ['a longer attribute name', '<a data-no-tracking href="https://a.example/">a</a>'],
    ['an element whose name starts with a', '<abbr data-no-track>x</abbr>'],
  ])('leaves %s as written', (_label, html) => {
    expect(markNoTrack(html)).toBe(html);
  });
});

/** A start tag as a model: its name, and attributes written with the given spacing and quoting. */
type Value = { kind: 'none' } | { kind: 'double' | 'single' | 'bare'; text: string };
interface TagModel {
  readonly name: string;
  readonly attributes: readonly { readonly name: string; readonly value: Value; readonly space: string }[];
}
const written = (value: Value): string =>
  value.kind === 'none' ? '' : value.kind === 'double' ? `="${value.text}"` : value.kind === 'single' ? `='${value.text}'` : `=${value.text}`;
const tagText = (tag: TagModel, mark: (name: string) => string | undefined) =>
  `<${tag.name}${tag.attributes.map((a) => `${a.space}${mark(a.name) ?? `${a.name}${written(a.value)}`}`).join('')}>`;
const isLink = (name: string) => ['a', 'area'].includes(name.toLowerCase());

const value: fc.Arbitrary<Value> = fc.oneof(
  fc.constant({ kind: 'none' as const }),
  fc.record({ kind: fc.constant('double' as const), text: fc.stringMatching(/^[a-z >'=/:.]{0,8}$/) }),
  fc.record({ kind: fc.constant('single' as const), text: fc.stringMatching(/^[a-z >"=/:.]{0,8}$/) }),
  fc.record({ kind: fc.constant('bare' as const), text: fc.stringMatching(/^[a-z/:.]{1,8}$/) }),
);
const tag: fc.Arbitrary<TagModel> = fc.record({
  name: fc.constantFrom('a', 'A', 'area', 'p', 'img', 'abbr'),
  attributes: fc.array(
    fc.record({ name: fc.constantFrom('href', 'title', 'data-no-track', 'Data-No-Track', 'data-no-tracking', 'class'), value, space: fc.constantFrom(' ', '\n', '  ', '\t') }),
    { maxLength: 4 },
  ),
});
const document = fc.array(fc.oneof(tag, fc.stringMatching(/^[a-z >"'.]{0,10}$/)), { maxLength: 8 });
const render = (parts: readonly (TagModel | string)[], mark: (tag: TagModel) => (name: string) => string | undefined) =>
  parts.map((part) => (typeof part === 'string' ? part : tagText(part, mark(part)))).join('');

describe('markNoTrack over generated HTML', () => {
  it('writes exactly the data-no-track attributes of <a> and <area> tags as ses:no-track, and nothing else', () => {
    fc.assert(
      fc.property(document, (parts) => {
        const html = render(parts, () => () => undefined);
        const expected = render(parts, (t) => (name) => (isLink(t.name) && name.toLowerCase() === 'data-no-track' ? 'ses:no-track' : undefined));
        expect(markNoTrack(html)).toBe(expected);
      }),
      { seed: 3702, numRuns: 2000 },
    );
  });

  it('leaves each marked link to the local SES front unrewritten, and rewrites the others (the ses:no-track interface)', () => {
    const link = fc.record({ href: fc.constantFrom('https://a.example/x', 'http://b.example/', 'mailto:c@example.org'), noTrack: fc.boolean(), title: fc.constantFrom('', ' title="1 > 0"') });
    fc.assert(
      fc.property(fc.array(link, { minLength: 1, maxLength: 6 }), (links) => {
        const html = links.map((l) => `<a${l.title}${l.noTrack ? ' data-no-track' : ''} href="${l.href}">x</a>`).join(' ');
        const { links: rewritten } = rewriteHtml(markNoTrack(html), { opens: false, clicks: true }, { open: 'https://t.example/o', click: (i) => `https://t.example/c/${i}` });
        expect(rewritten).toEqual(links.filter((l) => !l.noTrack && l.href.startsWith('http')).map((l) => l.href));
      }),
      { seed: 3703, numRuns: 300 },
    );
  });

  it('reads a body full of unclosed tags and quotes in time linear in its length (a pattern over whole tags was quadratic)', () => {
    const fastest = (html: string) => {
      const times: number[] = [];
      for (let i = 0; i < 9; i++) {
        const start = process.hrtime.bigint();
        markNoTrack(html);
        times.push(Number(process.hrtime.bigint() - start));
      }
      return Math.min(...times);
    };
    const hostile = (n: number) => `data-no-track${'<a x="1" '.repeat(n)}<a title="${'<a '.repeat(n)}`;
    const [small, large] = [hostile(1_000), hostile(4_000)];
    fastest(large); // compiled before either is timed
    // Four times the body: about four times the work when linear, sixteen when quadratic.
    const ratio = fastest(large) / fastest(small);
    expect(ratio).toBeLessThan(8);
  });
});
