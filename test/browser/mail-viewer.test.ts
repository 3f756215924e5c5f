/**
 * The local mail viewer in a real browser (CONTRACT section 12: locally the viewer shows each
 * message's attachments, reply-to, custom headers and tags): a message sent through the local
 * stack with all four, read on the viewer page, its inline image drawn inside the HTML view. A
 * tracked message's pixel is loaded only when its HTML view is shown (CONTRACT section 17: an open
 * is someone looking at the message, not the viewer listing it), and no message's script runs.
 */
import { deflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser } from 'playwright-core';
import type { TestStack, Tenant } from '../local/helpers';
import { adminEnv, messageBody, provisionTenant, send, startTestStack } from '../local/helpers';
import { collectErrors, launchChromium } from '../support/browser';

let stack: TestStack;
let browser: Browser;
let tenant: Tenant;

beforeAll(async () => {
  [stack, browser] = await Promise.all([startTestStack(), launchChromium()]);
  tenant = await provisionTenant(adminEnv(stack));
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

/** A valid PNG of `width` × 1 black pixels, so the browser can decode it and report its size. */
function png(width: number): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (bytes: Buffer) => {
    let c = 0xffffffff;
    for (const byte of bytes) c = crcTable[(c ^ byte) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc(body), 8 + data.length);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(1, 4);
  header.set([8, 0, 0, 0, 0], 8); // 8-bit greyscale
  const pixels = Buffer.concat([Buffer.from([0]), Buffer.alloc(width)]);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(pixels)), chunk('IEND', Buffer.alloc(0))]);
}

/** `work`, or a failure naming `what` once `ms` have passed without it settling. */
async function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('the local mail viewer', () => {
  it('shows Reply-To, decoded custom headers, tags, the attachments, and the inline image inside the HTML', async () => {
    const body = messageBody(tenant.organizationId, {
      Subject: 'Viewer check',
      HtmlContent: '<p>Logo:</p><img id="logo" src="cid:logo">',
      ReplyTo: ['help@example.com'],
      Headers: { 'X-Greeting': 'Grüße aus Köln', 'List-Unsubscribe': '<mailto:u@example.com>' },
      Tags: { invoice: 'inv-42' },
      Attachments: [
        { FileName: 'invoice.pdf', Content: Buffer.from('%PDF-1.4\n').toString('base64') },
        { FileName: 'logo.png', Content: png(7).toString('base64'), ContentId: 'logo' },
      ],
    });
    // Each step bounded below the test's own time, so a step that hangs is named (it happened once in CI).
    expect((await within(25_000, 'the send', send(stack, tenant.apiKey, body))).status).toBe(200);

    const page = await browser.newPage();
    const errors = collectErrors(page);
    try {
      await page.goto(stack.viewerUrl!, { timeout: 25_000 });
      const email = page.locator('.email', { hasText: 'Viewer check' });
      await email.waitFor({ timeout: 25_000 });
      const text = await email.innerText();
      expect(text).toContain('Reply to: help@example.com');
      expect(text).toContain('X-Greeting: Grüße aus Köln');
      expect(text).toContain('List-Unsubscribe: <mailto:u@example.com>');
      expect(text).toContain('Tags: invoice=inv-42');
      expect(text).toMatch(/Attachments: invoice\.pdf, logo\.png/);
      await email.getByRole('button', { name: 'Toggle HTML view' }).click();
      const width = await email
        .locator('iframe')
        .contentFrame()
        .locator('#logo')
        .evaluate(async (img) => {
          // In the page: an HTMLImageElement (the test's TypeScript has no DOM library).
          const image = img as unknown as { decode(): Promise<void>; naturalWidth: number };
          await image.decode();
          return image.naturalWidth;
        });
      expect(width).toBe(7);
      // The emulator answers its own favicon with 403 (its API's missing-credentials answer): not the viewer's doing.
      expect(errors.filter((error) => !error.includes('/favicon.ico'))).toEqual([]);
    } finally {
      await page.close();
    }
  }, 90_000);

  it('loads a tracked message’s pixel only when its HTML view is shown, and runs none of its script', async () => {
    const subject = `Tracked in the viewer ${Date.now()}`;
    const html = '<p>Hi</p><img src="data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7" onload="parent.document.title = \'script ran\'">';
    const sent = await send(stack, tenant.apiKey, messageBody(tenant.organizationId, { Subject: subject, HtmlContent: html, Tracking: { Opens: true } }));
    expect(sent.status).toBe(200);
    const { Messages: [{ MessageId: messageId }] } = (await sent.json()) as { Messages: [{ MessageId: string }] };
    const opens = async (): Promise<number> => {
      const answer = await fetch(stack.statusUrl, {
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ OrganizationId: tenant.organizationId, MessageIds: [messageId] }),
      });
      return ((await answer.json()) as { Messages: [{ Opens?: number }] }).Messages[0].Opens ?? 0;
    };
    // Past the first 2 seconds after delivery, when a load of the pixel counts as someone's open.
    await new Promise((resolve) => setTimeout(resolve, 2_500));

    const page = await browser.newPage();
    try {
      await page.goto(stack.viewerUrl!);
      const email = page.locator('.email', { hasText: subject });
      await email.waitFor();
      await expect(email.innerText()).resolves.toContain('Tracked: opens');
      // Listed, not looked at: give a hidden frame time to load what it would, and the open time
      // to reach the status (within two seconds, CONTRACT section 17).
      await page.waitForTimeout(2_000);
      expect(await opens()).toBe(0);

      await email.getByRole('button', { name: 'Toggle HTML view' }).click();
      await email.locator('iframe').contentFrame().locator('p', { hasText: 'Hi' }).waitFor();
      const end = Date.now() + 5_000;
      while ((await opens()) === 0 && Date.now() < end) await page.waitForTimeout(100);
      expect(await opens()).toBe(1);
      expect(await page.title()).not.toBe('script ran');
      // Hidden and shown again, it is not loaded again.
      await email.getByRole('button', { name: 'Toggle HTML view' }).click();
      await email.getByRole('button', { name: 'Toggle HTML view' }).click();
      await page.waitForTimeout(500);
      expect(await opens()).toBe(1);
    } finally {
      await page.close();
    }
  });
});
