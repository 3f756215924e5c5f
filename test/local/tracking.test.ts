/**
 * Open and click tracking through the local stack's public API (CONTRACT section 17): messages as
 * delivered with and without tracking (each combination, and an Organization's default), what is
 * never rewritten (`mailto:`, `data-no-track`, the text part), the tracking endpoint's redirect,
 * a forged tracking URL refused without one, and opens and clicks recorded once each in status,
 * Activity and signed webhooks, machine opens flagged and not counted, and another Organization
 * seeing none of it. Every response is checked against openapi.json.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { StoredEmail } from '../support/ses-store';
import { withLastCharChanged } from '../support/tamper';
import type { TestStack, Tenant } from './helpers';
import { adminEnv, adminJson, hookedTenant, messageBody, provisionTenant, send, sentEmails, startTestStack } from './helpers';

const HTML = [
  '<html><body><p>Your order is <a href="https://shop.example/order?id=7&amp;ref=mail">here</a>.</p>',
  '<p><a href="mailto:help@shop.example">Mail us</a>, <a data-no-track href="https://shop.example/account">your account</a>.</p>',
  '</body></html>',
].join('\n');
const TEXT = 'Your order: https://shop.example/order?id=7';
const TRACKING_URL = /"(http:\/\/127\.0\.0\.1:\d+\/track\/(?:open|click)\/[^"]+)"/g;

let stack: TestStack;
let env: Record<string, string>;
let tenant: Tenant;

beforeAll(async () => {
  stack = await startTestStack({ webhookRetryScale: 0.001 });
  env = adminEnv(stack);
  tenant = await provisionTenant(env);
});
afterAll(async () => stack?.stop());

/** Sends one message to `to` and returns it as the SES emulator stored it (the viewer's `/store`). */
async function delivered(who: Tenant, overrides: Record<string, unknown> = {}, to = 'alice@example.org'): Promise<StoredEmail & { tracking?: unknown; messageId: string }> {
  const response = await send(stack, who.apiKey, messageBody(who.organizationId, { To: [to], HtmlContent: HTML, TextContent: TEXT, ...overrides }));
  const body = (await response.json()) as Record<string, any>;
  expect({ status: response.status, result: body.Messages?.[0]?.Status }).toEqual({ status: 200, result: 'Sent' });
  const messageId = body.Messages[0].MessageId as string;
  const stored = (await sentEmails(stack.sesUrl)).find((email) => email.messageId === messageId);
  if (!stored) throw new Error(`message ${messageId} is not in the emulator's store`);
  return stored;
}

const trackingUrls = (html: string | undefined) => [...(html ?? '').matchAll(TRACKING_URL)].map((match) => match[1] ?? '');

describe('tracked and untracked messages as delivered', () => {
  it.each([
    ['no Tracking (the default: off)', undefined, false, false],
    ['Tracking off', { Opens: false, Clicks: false }, false, false],
    ['Opens', { Opens: true }, true, false],
    ['Clicks', { Clicks: true }, false, true],
    ['Opens and Clicks', { Opens: true, Clicks: true }, true, true],
  ])('%s: the pixel and links as tracked', async (_name, tracking, opens, clicks) => {
    const email = await delivered(tenant, tracking ? { Tracking: tracking } : {});
    const html = email.body.html ?? '';
    expect(email.body.text).toBe(TEXT);
    if (!opens && !clicks) {
      // Untracked mail is delivered exactly as written: data-no-track stays the sender's own.
      expect(html).toBe(HTML);
      expect(email.tracking).toBeUndefined();
      return;
    }
    expect(email.tracking).toEqual({ opens, clicks });
    const urls = trackingUrls(html);
    expect(urls.filter((url) => url.includes('/track/open/'))).toHaveLength(opens ? 1 : 0);
    expect(urls.filter((url) => url.includes('/track/click/'))).toHaveLength(clicks ? 1 : 0);
    expect(html.includes('https://shop.example/order')).toBe(!clicks);
    // Never rewritten: mailto:, and a data-no-track link (which loses the mark, as SES removes ses:no-track).
    expect(html).toContain('<a href="mailto:help@shop.example">');
    expect(html).toContain('<a href="https://shop.example/account">');
    expect(html).not.toMatch(/no-track/);
  });

  it("tracks a message without Tracking when its Organization's default says so", async () => {
    const own = await provisionTenant(env);
    await adminJson(env, 'org', 'tracking', '--org', own.organizationId, '--opens', 'on', '--clicks', 'off');
    const email = await delivered(own);
    expect(email.tracking).toEqual({ opens: true, clicks: false });
    expect(trackingUrls(email.body.html).map((url) => url.includes('/track/open/'))).toEqual([true]);
  });
  it("rewrites a template's rendered HTML as it does written HTML", async () => {
    const saved = await fetch(`${stack.apiUrl}/v1.2/templates/tracked-receipt`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ OrganizationId: tenant.organizationId, Subject: 'Order {{id}}', TextContent: 'Order {{id}}', HtmlContent: '<p><a href="https://shop.example/o/{{id}}">Order {{id}}</a></p>' }),
    });
    expect(saved.status).toBe(201);
    const email = await delivered(tenant, { Subject: undefined, TextContent: undefined, HtmlContent: undefined, Template: { Name: 'tracked-receipt', Variables: { id: 'A-7' } }, Tracking: { Opens: true, Clicks: true } });
    const [link = '', pixel = ''] = trackingUrls(email.body.html);
    expect(pixel).toContain('/track/open/');
    expect((await fetch(link, { redirect: 'manual' })).headers.get('location')).toBe('https://shop.example/o/A-7');
  });
});

describe('the tracking endpoint', () => {
  it('redirects a tracked link to its original URL with 302', async () => {
    const email = await delivered(tenant, { Tracking: { Clicks: true } });
    const [link = ''] = trackingUrls(email.body.html);
    const answer = await fetch(link, { redirect: 'manual' });
    expect(answer.status).toBe(302);
    expect(answer.headers.get('location')).toBe('https://shop.example/order?id=7&ref=mail');
  });

  it('refuses a forged or altered tracking URL with 404, redirecting nowhere', async () => {
    const email = await delivered(tenant, { Tracking: { Opens: true, Clicks: true } });
    const [link = '', pixel = ''] = trackingUrls(email.body.html);
    const forged = [
      withLastCharChanged(link),
      link.replace(/\/click\/[^/]{4}/, '/click/AAAA'),
      `${stack.sesUrl}/track/click/${'A'.repeat(22)}/${'A'.repeat(43)}/0.${'A'.repeat(11)}`,
      withLastCharChanged(pixel),
    ];
    for (const url of forged) {
      const answer = await fetch(url, { redirect: 'manual' });
      expect({ url, status: answer.status, location: answer.headers.get('location') }).toEqual({ url, status: 404, location: null });
    }
  });
});

const HUMAN = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Thunderbird/128.0';
const GMAIL_PROXY = 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const fetchAs = (url: string, userAgent: string) => fetch(url, { redirect: 'manual', headers: { 'user-agent': userAgent } });

/** Polls until `done` holds, or fails after `ms`: a bound against a hang on a busy machine, not a speed claim. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > end) throw new Error(`still not there after ${ms} ms: ${JSON.stringify(value)}`);
    await sleep(50);
  }
}

async function statusOf(who: Tenant, messageId: string): Promise<Record<string, any>> {
  const response = await fetch(stack.statusUrl, {
    method: 'POST',
    headers: { authorization: `Bearer ${who.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ OrganizationId: who.organizationId, MessageIds: [messageId] }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { Messages: Record<string, any>[] }).Messages[0] ?? {};
}

/** An Organization whose webhook is a receiver on 127.0.0.1, and its Activity as its member's settings page reads it. */
async function trackedTenant() {
  const hooked = await hookedTenant(stack, env, 'Tracked');
  return {
    ...hooked,
    activity: async () => {
      const answer = await fetch(`${stack.apiUrl}/v1.2/me/messages`, { headers: { authorization: `Bearer ${hooked.token}` } });
      expect(answer.status).toBe(200);
      return ((await answer.json()) as { Messages: Record<string, any>[] }).Messages;
    },
  };
}

describe('opens and clicks, recorded', () => {
  it('counts a person’s open and click once each in status, Activity and signed webhooks; machine opens are flagged, not counted; another Organization sees none', async () => {
    const hooked = await trackedTenant();
    const other = await trackedTenant();
    try {
      const email = await delivered(hooked.tenant, { Tracking: { Opens: true, Clicks: true } });
      const [link = '', pixel = ''] = trackingUrls(email.body.html);
      // At once: an open within 2 s of delivery, which no person makes. And a listed image proxy.
      expect((await fetchAs(pixel, HUMAN)).status).toBe(200);
      expect((await fetchAs(pixel, GMAIL_PROXY)).status).toBe(200);
      const delivery = await until(() => statusOf(hooked.tenant, email.messageId), (m) => m.Status === 'Delivered');
      await sleep(Math.max(0, Date.parse(delivery.Recipients[0].At) + 2_500 - Date.now()));

      // A mail scanner probes both URLs with HEAD: the same answers, no body, nothing recorded.
      const probes = await Promise.all([pixel, link].map((url) => fetch(url, { method: 'HEAD', redirect: 'manual', headers: { 'user-agent': HUMAN } })));
      expect(await Promise.all(probes.map(async (answer) => ({ status: answer.status, type: answer.headers.get('content-type'), location: answer.headers.get('location'), body: await answer.text() })))).toEqual([
        { status: 200, type: 'image/gif', location: null, body: '' },
        { status: 302, type: null, location: 'https://shop.example/order?id=7&ref=mail', body: '' },
      ]);

      // A person opens it, then follows the link.
      const opening = Date.now();
      expect((await fetchAs(pixel, HUMAN)).status).toBe(200);
      const opened = Date.now();
      const followed = await fetchAs(link, HUMAN);
      expect({ status: followed.status, location: followed.headers.get('location') }).toEqual({ status: 302, location: 'https://shop.example/order?id=7&ref=mail' });

      const webhooks = await until(
        async () => hooked.events().filter((event) => event.type === 'email.opened' || event.type === 'email.clicked'),
        (events) => events.length >= 4,
      );
      // Nothing more comes: each event was recorded once.
      await sleep(1_000);
      expect(hooked.events().filter((event) => event.type === 'email.opened' || event.type === 'email.clicked')).toHaveLength(4);
      const opens = webhooks.filter((event) => event.type === 'email.opened').map((event) => event.data);
      expect(opens.map((data) => [data.UserAgent, data.Machine]).sort()).toEqual([[GMAIL_PROXY, true], [HUMAN, false], [HUMAN, true]].sort());
      for (const data of opens) expect(data).toMatchObject({ MessageId: email.messageId, Recipient: 'alice@example.org', At: expect.any(String) });
      const [clicked] = webhooks.filter((event) => event.type === 'email.clicked').map((event) => event.data);
      expect(clicked).toMatchObject({ MessageId: email.messageId, Recipient: 'alice@example.org', Url: 'https://shop.example/order?id=7&ref=mail', UserAgent: HUMAN, Machine: false });

      const message = await statusOf(hooked.tenant, email.messageId);
      const clicks = [{ Url: 'https://shop.example/order?id=7&ref=mail', At: expect.any(String) }];
      expect(message).toMatchObject({ Status: 'Delivered', Opens: 1, Clicks: clicks });
      // The person's open, not the machine's earlier one (the stack shares this process's clock).
      expect(Date.parse(message.FirstOpenedAt)).toBeGreaterThanOrEqual(opening);
      expect(Date.parse(message.FirstOpenedAt)).toBeLessThanOrEqual(opened);
      expect(message.Recipients).toEqual([expect.objectContaining({ Address: 'alice@example.org', Status: 'Delivered', Opens: 1, FirstOpenedAt: message.FirstOpenedAt, Clicks: clicks })]);

      const row = (await hooked.activity()).find((entry) => entry.MessageId === email.messageId);
      expect(row).toMatchObject({ Status: 'Delivered', Opens: 1, Clicks: 1 });

      // Another Organization learns nothing of it: not by status, Activity or webhook.
      expect(await statusOf(other.tenant, email.messageId)).toEqual({ MessageId: email.messageId, Status: 'Unknown', Recipients: [], Tags: {} });
      expect((await other.activity()).map((entry) => entry.MessageId)).not.toContain(email.messageId);
      expect(other.events()).toEqual([]);
    } finally {
      hooked.close();
      other.close();
    }
  });
});
