import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { resolveMessageTracking } from '../../functions/send/tracking';
import { validateSendRequest } from '../../functions/send/validation';
import { ValidationProblem } from '../../functions/shared/http/problems';
import { markNoTrack } from '../../functions/shared/mail/no-track';
import type { OutgoingEmail } from '../../functions/shared/mail/ports';
import { toSendEmailRequest } from '../../functions/shared/mail/ses-message';
import { NO_TRACKING, readTracking, resolveTracking } from '../../functions/shared/mail/tracking';

const ORG = '5f0c7c2e-8d1c-4a55-9a8e-0c3f5e2b9a10';
const limits = { maxMessages: 100 };
const msg = (overrides: Record<string, unknown> = {}) => ({ To: ['a@example.org'], From: 'noreply@example.com', Subject: 'Hi', HtmlContent: '<p>x</p>', ...overrides });

function problemsOf(body: unknown): { pointer: string; detail: string }[] {
  try {
    validateSendRequest(body, limits);
  } catch (error) {
    if (error instanceof ValidationProblem) return [...(error.errors ?? [])];
    throw error;
  }
  throw new Error('expected a ValidationProblem');
}

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
