/**
 * The settings page's Templates panel in a real browser, against a whole local stack: a user
 * signs in, opens Templates, sees the templates of their Organization (saved with the admin CLI)
 * and not another Organization's, previews one with the Variables they type (the HTML body's
 * value escaped, shown as its source), and is told which variable is missing when they leave it
 * out, by mouse and keyboard, with no console error but the refused preview's 400.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser } from 'playwright-core';
import type { TestStack } from '../local/helpers';
import { adminEnv, adminJson, startTestStack } from '../local/helpers';
import { collectErrors, launchChromium } from '../support/browser';

let stack: TestStack;
let browser: Browser;
let env: Record<string, string>;
let files: string;

beforeAll(async () => {
  [stack, browser, files] = await Promise.all([startTestStack(), launchChromium(), mkdtemp(join(tmpdir(), 'settings-templates-'))]);
  env = adminEnv(stack);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  if (files) await rm(files, { recursive: true, force: true });
});

async function template(organizationId: string, name: string, subject: string, text: string, html: string): Promise<void> {
  await writeFile(join(files, `${name}.txt`), text);
  await writeFile(join(files, `${name}.html`), html);
  await adminJson(env, 'template', 'put', '--org', organizationId, '--name', name, '--subject', subject, '--text-file', join(files, `${name}.txt`), '--html-file', join(files, `${name}.html`));
}

describe("the settings page's Templates panel", () => {
  it('lists the Organization\'s templates, not another\'s, and previews one with the Variables typed in', async () => {
    const email = 'tam@acme-templates.example';
    const { id: organizationId } = await adminJson(env, 'org', 'create', '--name', 'Acme Templates');
    const { id: otherId } = await adminJson(env, 'org', 'create', '--name', 'Other Templates');
    const { id: userId } = await adminJson(env, 'user', 'create', '--email', email);
    await adminJson(env, 'member', 'add', '--org', organizationId, '--user', userId);
    await template(organizationId, 'order-shipped', 'Order {{order}} shipped', 'Hi {{name}}, order {{order}} is on its way.', '<p>Hi {{name}}</p>');
    await template(otherId, 'other-secret', 'Not yours', 'x', '<p>x</p>');

    const context = await browser.newContext({ viewport: { width: 1100, height: 720 } });
    const page = await context.newPage();
    const errors = collectErrors(page);
    await page.goto(stack.settingsUrl);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${stack.settingsUrl}**`);
    await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Templates' }).click();

    const rows = page.locator('#templates-rows').getByRole('row');
    await rows.first().waitFor();
    expect(await rows.count()).toBe(1);
    await expect(rows.first().locator('td').allTextContents()).resolves.toEqual(['Acme Templates', 'order-shipped', '1', expect.any(String), 'Preview']);
    expect(await page.locator('#templates').textContent()).not.toContain('other-secret');

    // The Variables typed in, one of them unsafe in HTML: escaped in the HTML body, as is in the text.
    await page.getByLabel('Variables for the preview (a JSON object)').fill('{"name": "Ada <3", "order": "A-17"}');
    await page.getByRole('button', { name: 'Preview order-shipped of Acme Templates' }).click();
    await page.locator('#template-preview').waitFor();
    await expect(page.locator('#preview-title').textContent()).resolves.toBe('Preview: order-shipped, version 1');
    await expect(page.locator('#preview-subject').textContent()).resolves.toBe('Order A-17 shipped');
    await expect(page.locator('#preview-text').textContent()).resolves.toBe('Hi Ada <3, order A-17 is on its way.');
    await expect(page.locator('#preview-html').textContent()).resolves.toBe('<p>Hi Ada &lt;3</p>');

    // A variable left out: the page says which, and shows no preview. By keyboard this time.
    await page.getByLabel('Variables for the preview (a JSON object)').fill('{"name": "Ada"}');
    expect(await page.locator('#template-preview').isVisible()).toBe(false);
    await page.getByRole('button', { name: 'Preview order-shipped of Acme Templates' }).focus();
    await page.keyboard.press('Enter');
    await page.getByText('/Variables/order: the template uses this variable, and Variables does not give it.').waitFor({ timeout: 10_000 });
    expect(await page.locator('#template-preview').isVisible()).toBe(false);

    expect(errors.filter((error) => !/status of 400/.test(error))).toEqual([]);
    await context.close();
  });
});
