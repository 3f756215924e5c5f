/**
 * The local SES front playing SES's open and click tracking (CONTRACT section 17, item 5), called
 * as the service calls SES: a SendEmail naming a tracked configuration set is stored rewritten,
 * the pixel and links of the stored message record SES-shaped Open and Click events, and a forged
 * or altered tracking URL is refused without a redirect.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import type { SendEmailCommandInput } from '@aws-sdk/client-sesv2';
import { configurationSetFor } from '../../functions/shared/mail/tracking';
import { createMailboxSimulator } from '../../infra/local/mailbox-simulator';
import { startLocalSes } from '../../infra/local/ses-rate-gate';
import { sentEmails } from './helpers';

const BASE = 'EmailApi-Local';
const HTML = [
  '<html><body><p>Your order is <a href="https://shop.example/order?id=7&amp;ref=mail">here</a>.</p>',
  '<p><a href="mailto:help@shop.example">Mail us</a> or <a href="tel:+15555550100">call</a>, <a href="#terms">terms</a>.</p>',
  '<p><a ses:no-track href="https://shop.example/account">Your account</a> <a href="https://shop.example/help">Help</a></p></body></html>',
].join('\n');
const TEXT = 'Your order: https://shop.example/order?id=7';

type Events = Record<string, any>[];

describe('the local SES front, tracking opens and clicks', () => {
  let ses: Awaited<ReturnType<typeof startLocalSes>>;
  let own: SESv2Client;
  let stranger: SESv2Client;
  const events: Events = [];

  beforeAll(async () => {
    ses = await startLocalSes({ port: 0, region: 'eu-west-1', onEngagement: (event) => events.push(event) });
    const client = () => new SESv2Client({ region: 'eu-west-1', endpoint: ses.endpoint, maxAttempts: 1, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    own = ses.ownSends(client()) as SESv2Client;
    stranger = client();
  });
  afterAll(async () => {
    own.destroy();
    stranger.destroy();
    await ses.close();
  });

  const sendEmail = async (configurationSet: string | undefined, input: Partial<SendEmailCommandInput> = {}, client = own) => {
    const { MessageId } = await client.send(
      new SendEmailCommand({
        FromEmailAddress: 'receipts@shop.example',
        Destination: { ToAddresses: ['alice@example.org'] },
        Content: { Simple: { Subject: { Data: 'Your order' }, Body: { Html: { Data: HTML }, Text: { Data: TEXT } } } },
        EmailTags: [{ Name: 'OrganizationId', Value: 'org-1' }],
        ConfigurationSetName: configurationSet,
        ...input,
      }),
    );
    const stored = (await sentEmails(ses.endpoint)).find((email) => email.messageId === MessageId);
    if (!MessageId || !stored) throw new Error('the message was not stored');
    return { messageId: MessageId, stored: stored as typeof stored & { tracking?: unknown }, html: stored.body.html ?? '' };
  };
  const trackingUrls = (html: string) => [...html.matchAll(/"(http:\/\/127\.0\.0\.1:\d+\/track\/[^"]+)"/g)].map((match) => match[1] ?? '');
  const get = (url: string, userAgent = 'Mozilla/5.0 (Macintosh) Thunderbird/128.0') => fetch(url, { redirect: 'manual', headers: { 'user-agent': userAgent } });

  it.each([
    ['no configuration set', undefined, false, false],
    ['the base set', BASE, false, false],
    ['track-opens', configurationSetFor(BASE, { opens: true, clicks: false }), true, false],
    ['track-clicks', configurationSetFor(BASE, { opens: false, clicks: true }), false, true],
    ['track-opens-clicks', configurationSetFor(BASE, { opens: true, clicks: true }), true, true],
  ])('stores a message sent through %s with the pixel and tracked links exactly as SES would deliver it', async (_name, set, opens, clicks) => {
    const { html, stored } = await sendEmail(set);
    if (!opens && !clicks) {
      expect(html).toBe(HTML);
      expect(stored.tracking).toBeUndefined();
      return;
    }
    expect(stored.tracking).toEqual({ opens, clicks });
    expect(stored.body.text).toBe(TEXT);
    const urls = trackingUrls(html);
    expect(urls.filter((url) => url.includes('/track/open/'))).toHaveLength(opens ? 1 : 0);
    expect(urls.filter((url) => url.includes('/track/click/'))).toHaveLength(clicks ? 2 : 0);
    if (opens) expect(html).toMatch(/<img src="[^"]+\/track\/open\/[^"]+" width="1" height="1"[^>]*\/><\/body><\/html>$/);
    expect(html.includes('https://shop.example/order')).toBe(!clicks);
    for (const kept of ['<a href="mailto:help@shop.example">', '<a href="tel:+15555550100">', '<a href="#terms">', '<a href="https://shop.example/account">']) expect(html).toContain(kept);
    expect(html).not.toContain('ses:no-track');
  });

  it('records an Open for the pixel and a Click with a 302 to the original URL, as SES publishes them', async () => {
    const { messageId, html } = await sendEmail(configurationSetFor(BASE, { opens: true, clicks: true }));
    const [click, help, open] = trackingUrls(html);
    events.length = 0;
    expect((await get(help ?? '')).headers.get('location')).toBe('https://shop.example/help');
    events.length = 0;

    const pixel = await get(open ?? '');
    expect(pixel.status).toBe(200);
    expect(pixel.headers.get('content-type')).toBe('image/gif');
    expect(Buffer.from(await pixel.arrayBuffer()).subarray(0, 6).toString()).toBe('GIF89a');
    const followed = await get(click ?? '', 'GoogleImageProxy');
    expect(followed.status).toBe(302);
    expect(followed.headers.get('location')).toBe('https://shop.example/order?id=7&ref=mail');

    expect(events).toHaveLength(2);
    const [opened, clicked] = events as [Record<string, any>, Record<string, any>];
    expect(opened).toMatchObject({ source: 'aws.ses', 'detail-type': 'Email Opened', region: 'eu-west-1', detail: { eventType: 'Open' } });
    expect(opened.detail.open).toEqual({ ipAddress: '127.0.0.1', timestamp: expect.any(String), userAgent: 'Mozilla/5.0 (Macintosh) Thunderbird/128.0' });
    expect(opened.detail.mail).toMatchObject({
      messageId,
      destination: ['alice@example.org'],
      tags: { OrganizationId: ['org-1'], 'ses:configuration-set': [`${BASE}-track-opens-clicks`] },
    });
    expect(clicked).toMatchObject({ 'detail-type': 'Email Clicked', detail: { eventType: 'Click', mail: { messageId } } });
    expect(clicked.detail.click).toEqual({ ipAddress: '127.0.0.1', timestamp: expect.any(String), userAgent: 'GoogleImageProxy', link: 'https://shop.example/order?id=7&ref=mail', linkTags: {} });
    expect(Math.abs(Date.parse(clicked.detail.click.timestamp) - Date.now())).toBeLessThan(2_000);
  });

  it('refuses forged, altered and unknown tracking URLs with 404 and no redirect', async () => {
    const { html } = await sendEmail(configurationSetFor(BASE, { opens: true, clicks: true }));
    const [click = '', , open = ''] = trackingUrls(html);
    events.length = 0;
    const flip = (url: string, at: number) => url.slice(0, at) + (url[at] === 'A' ? 'B' : 'A') + url.slice(at + 1);
    // A link another stack (another key) wrote, brought here.
    const other = await startLocalSes({ port: 0 });
    const otherClient = new SESv2Client({ region: 'eu-west-1', endpoint: other.endpoint, maxAttempts: 1, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const [otherClick = ''] = trackingUrls((await sendEmail(configurationSetFor(BASE, { opens: true, clicks: true }), {}, otherClient)).html);
    otherClient.destroy();
    await other.close();
    const strangerUrl = otherClick.replace(other.endpoint, ses.endpoint);
    const [, signature = ''] = /\/click\/[^/]+\/([^/]+)\//.exec(click) ?? [];
    const refused = [
      flip(click, click.length - 1), // the link's token
      flip(click, click.indexOf(signature) + 3), // the signature
      flip(click, click.indexOf('/click/') + 8), // the reference
      click.replace(/\/0\.([^/]+)$/, '/1.$1'), // another link of the message, under this one's token
      `${open.replace('/open/', '/click/')}/0.`, // the pixel's URL made a link's
      `${ses.endpoint}/track/click/${'A'.repeat(22)}/${'A'.repeat(43)}/0.${'A'.repeat(11)}`, // made up
      strangerUrl, // another stack's (another key)
      `${ses.endpoint}/track/click/x`,
      click.replace(/\/0\.([^/]+)$/, '/00.$1'), // the same link's number written another way
      `${click}?u=https://elsewhere.example/`, // a query added
      `${open}?u=1`,
    ];
    for (const url of refused) {
      const answer = await get(url);
      expect({ url, status: answer.status, location: answer.headers.get('location') }).toEqual({ url, status: 404, location: null });
    }
    expect((await fetch(click, { method: 'POST', redirect: 'manual' })).status).toBe(404);
    expect(events).toEqual([]);
  });

  it('rewrites a tracked message of anyone but records events only for the service’s own sends', async () => {
    const { html } = await sendEmail(configurationSetFor(BASE, { opens: true, clicks: true }), {}, stranger);
    const [click = '', , open = ''] = trackingUrls(html);
    events.length = 0;
    expect((await get(open)).status).toBe(200);
    expect((await get(click)).headers.get('location')).toBe('https://shop.example/order?id=7&ref=mail');
    expect(events).toEqual([]);
  });

  it('rewrites the HTML part of Raw content as SES does, leaving the other parts as they were', async () => {
    // Composed as the send path composes a message past Simple's header limits (ses-message.ts).
    const { default: MailComposer } = await import('nodemailer/lib/mail-composer');
    const html = `${HTML.replace('Your order', 'Votre commande, déjà prête')}\n<p>${'x'.repeat(200)}</p>`;
    const mime = await new MailComposer({
      from: 'receipts@shop.example',
      to: 'alice@example.org',
      subject: 'Raw',
      headers: [{ key: 'X-Custom', value: 'kept' }],
      text: TEXT,
      html,
      attachments: [{ filename: 'page.html', content: Buffer.from('<a href="https://shop.example/attached">in an attachment</a>'), contentType: 'text/html' }],
    })
      .compile()
      .build();
    const { html: stored, stored: email } = await sendEmail(configurationSetFor(BASE, { opens: true, clicks: true }), { Content: { Raw: { Data: mime } } });
    const urls = trackingUrls(stored);
    expect(urls.map((url) => /\/track\/(open|click)\//.exec(url)?.[1])).toEqual(['click', 'click', 'open']);
    expect(stored).toContain('Votre commande, déjà prête');
    expect(stored).toContain(`<p>${'x'.repeat(200)}</p>`);
    expect(stored).toContain('<a href="mailto:help@shop.example">');
    expect(stored).not.toContain('ses:no-track');
    expect(email.body.text).toBe(TEXT);
    expect((await get(urls[0] ?? '')).headers.get('location')).toBe('https://shop.example/order?id=7&ref=mail');
    const attachment = (email as unknown as { attachments: { content: string }[] }).attachments[0];
    expect(Buffer.from(attachment?.content ?? '', 'base64').toString()).toBe('<a href="https://shop.example/attached">in an attachment</a>');
  });

  it('rewrites a base64-encoded HTML part of Raw content too', async () => {
    const { default: MailComposer } = await import('nodemailer/lib/mail-composer');
    // Mostly outside ASCII, so the composer picks base64 over quoted-printable.
    const html = `<p>${'ü'.repeat(300)} <a href="https://shop.example/ü/😀 x">ü</a></p>`;
    const mime = await new MailComposer({ from: 'receipts@shop.example', to: 'alice@example.org', subject: 'Raw', html }).compile().build();
    expect(mime.toString()).toMatch(/Content-Transfer-Encoding: base64/);
    const { html: stored } = await sendEmail(configurationSetFor(BASE, { opens: false, clicks: true }), { Content: { Raw: { Data: mime } } });
    const [link = ''] = trackingUrls(stored);
    expect(stored).toContain('ü'.repeat(300));
    expect((await get(link)).headers.get('location')).toBe('https://shop.example/%C3%BC/%F0%9F%98%80%20x');
  });

  it('passes a Raw message through an untracked set byte for byte', async () => {
    const mime = Buffer.from(`From: receipts@shop.example\r\nTo: alice@example.org\r\nSubject: Raw\r\nMIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n\r\n${HTML}\r\n`);
    const { html } = await sendEmail(BASE, { Content: { Raw: { Data: mime } } });
    expect(html.trim()).toBe(HTML);
  });
});

describe('the local SES front, every event of a message at one send time', () => {
  it('gives the simulator’s events and the Open and Click the same mail.timestamp, however the front’s clock moves between readings', async () => {
    // A clock that moves at every reading: a second reading of it for the same send would differ.
    // The events function keys a message's Activity row by mail.timestamp, so opens and clicks
    // carrying another would go to a row Activity never lists (test/local/tracking.test.ts, once).
    let clock = Date.parse('2026-03-01T12:00:00.000Z');
    const simulated: Events = [];
    const engagement: Events = [];
    const simulate = createMailboxSimulator({ region: 'eu-west-1', publish: (event) => simulated.push(event) });
    const ses = await startLocalSes({ port: 0, region: 'eu-west-1', now: () => clock++, onSent: (request, answer, sentAt) => simulate(request, answer, sentAt), onEngagement: (event) => engagement.push(event) });
    const client = ses.ownSends(new SESv2Client({ region: 'eu-west-1', endpoint: ses.endpoint, maxAttempts: 1, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } })) as SESv2Client;
    try {
      const { MessageId } = await client.send(
        new SendEmailCommand({
          FromEmailAddress: 'receipts@shop.example',
          Destination: { ToAddresses: ['alice@example.org'] },
          Content: { Simple: { Subject: { Data: 'Your order' }, Body: { Html: { Data: HTML } } } },
          EmailTags: [{ Name: 'OrganizationId', Value: 'org-1' }],
          ConfigurationSetName: configurationSetFor(BASE, { opens: true, clicks: true }),
        }),
      );
      const stored = (await sentEmails(ses.endpoint)).find((email) => email.messageId === MessageId);
      const urls = [...(stored?.body.html ?? '').matchAll(/"(http:\/\/127\.0\.0\.1:\d+\/track\/[^"]+)"/g)].map((match) => match[1] ?? '');
      const [click = '', , open = ''] = urls;
      for (const url of [open, click]) await fetch(url, { redirect: 'manual', headers: { 'user-agent': 'Mozilla/5.0 (Macintosh) Thunderbird/128.0' } });
      // Delivery comes 100 ms after Send (functions/shared/delivery/mailbox-simulator.ts).
      const end = Date.now() + 5_000;
      while (simulated.length < 2 && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 20));

      const types = (list: Events) => list.map((event) => event.detail.eventType);
      expect([types(simulated), types(engagement)]).toEqual([['Send', 'Delivery'], ['Open', 'Click']]);
      const timestamps = new Set([...simulated, ...engagement].map((event) => event.detail.mail.timestamp));
      expect(timestamps.size).toBe(1);
      // And it is a reading of the front's clock, not the machine's.
      expect(Date.parse([...timestamps][0]!)).toBeLessThan(Date.parse('2026-03-02T00:00:00.000Z'));
    } finally {
      client.destroy();
      await ses.close();
    }
  });
});
