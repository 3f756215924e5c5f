/**
 * Open and click tracking through the local stack's public API (CONTRACT section 17): messages as
 * delivered with and without tracking (each combination, and an Organization's default), what is
 * never rewritten (`mailto:`, `data-no-track`, the text part), the tracking endpoint's redirect,
 * and a forged tracking URL refused without one. Every response is checked against openapi.json.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { StoredEmail } from '../support/ses-store';
import type { TestStack, Tenant } from './helpers';
import { adminEnv, adminJson, messageBody, provisionTenant, send, sentEmails, startTestStack } from './helpers';

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
      `${link.slice(0, -1)}${link.endsWith('A') ? 'B' : 'A'}`,
      link.replace(/\/click\/[^/]{4}/, '/click/AAAA'),
      `${stack.sesUrl}/track/click/${'A'.repeat(22)}/${'A'.repeat(43)}/0.${'A'.repeat(11)}`,
      `${pixel.slice(0, -1)}${pixel.endsWith('A') ? 'B' : 'A'}`,
    ];
    for (const url of forged) {
      const answer = await fetch(url, { redirect: 'manual' });
      expect({ url, status: answer.status, location: answer.headers.get('location') }).toEqual({ url, status: 404, location: null });
    }
  });
});
