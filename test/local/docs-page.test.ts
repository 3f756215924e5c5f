/**
 * GET /docs as a person sees it: the local stack's page opened in Chromium, where Redoc must
 * render the operations of openapi.json from the same origin, with no script error and nothing
 * fetched from elsewhere.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../support/browser';
import { openApiDocument } from '../support/openapi';
import type { TestStack } from './helpers';
import { startTestStack } from './helpers';

let stack: TestStack;
let browser: Browser;

beforeAll(async () => {
  [stack, browser] = await Promise.all([startTestStack(), launchChromium()]);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

// Redoc's side menu always shows its logo from Redocly's CDN; the page's policy blocks it.
const BLOCKED_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';

describe('GET /docs in a browser', () => {
  it('renders every operation of the document with Redoc, loading nothing from another origin', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const problems: string[] = [];
    const elsewhere: { url: string; failure?: string }[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().includes(BLOCKED_LOGO)) problems.push(`console: ${message.text()}`);
    });
    page.on('request', (request) => {
      const url = request.url();
      if (!url.startsWith(`${stack.apiUrl}/`) && !url.startsWith('blob:')) elsewhere.push({ url });
    });
    page.on('requestfailed', (request) => {
      const found = elsewhere.find((entry) => entry.url === request.url());
      if (found) found.failure = request.failure()?.errorText;
    });

    const response = await page.goto(`${stack.apiUrl}/docs`);
    expect(response?.status()).toBe(200);
    const send = openApiDocument.paths['/v1.2/email/send'].post;
    await page.locator('h2', { hasText: send.summary }).waitFor({ timeout: 20_000 });

    // The title and every operation's summary, as headings Redoc wrote from the document.
    expect(await page.locator('h1').first().textContent()).toBe(`${openApiDocument.info.title} (${openApiDocument.info.version})`);
    // Redoc 2 lists no `trace` operation (only the send path has one, a 405).
    const operations = Object.values<Record<string, any>>(openApiDocument.paths).flatMap((item) =>
      ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'].filter((method) => item[method]).map((method) => item[method].summary as string),
    );
    const headings = (await page.locator('h2').allTextContents()).map((text) => text.trim());
    expect(headings).toEqual(expect.arrayContaining(operations));
    // The send operation's request body fields and its documented statuses.
    const operation = page.locator(`[id="operation/${send.operationId}"]`);
    for (const field of ['OrganizationId', 'Messages']) await expect(operation.getByText(field, { exact: true }).first().isVisible()).resolves.toBe(true);
    const statuses = await operation.locator('button').allTextContents();
    for (const status of Object.keys(send.responses)) expect(statuses.some((text) => text.trim().startsWith(status))).toBe(true);

    expect(problems).toEqual([]);
    expect(elsewhere).toEqual(elsewhere.length === 0 ? [] : [{ url: BLOCKED_LOGO, failure: 'csp' }]);
    await page.close();
  }, 60_000);
});
