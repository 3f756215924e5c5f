/**
 * The settings page in a real browser, against a whole local stack (`startLocalStack`, as
 * `npm start` runs it): a user made with the admin CLI signs in at the embedded OpenID provider,
 * generates a key, copies it, sends with it, reloads (masked), copies it without showing it and
 * shows it, rotates, sees an Organization's limits and use and copies its id, finds a bounced
 * message in Activity by its recipient, removes the address from Suppressions, has an ID token
 * refused, revokes and signs out, by mouse and keyboard, with no console error on the way.
 *
 * `UPDATE_SCREENSHOTS=1` also writes the screenshot the README and docs/settings-page.md show (docs/settings-page.png).
 */
import { writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { TestStack } from '../local/helpers';
import { adminEnv, adminJson, startTestStack } from '../local/helpers';
import { collectErrors, launchChromium } from '../support/browser';

let stack: TestStack;
let browser: Browser;
let env: Record<string, string>;

beforeAll(async () => {
  [stack, browser] = await Promise.all([startTestStack(), launchChromium()]);
  env = adminEnv(stack);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

async function newPage(): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 720 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.apiUrl });
  const page = await context.newPage();
  return { context, page, errors: collectErrors(page) };
}

/** From the settings page's "Sign in" through the provider's form and back. */
async function signIn(page: Page, email: string): Promise<void> {
  await page.goto(stack.settingsUrl);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByLabel('Email').fill(email);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${stack.settingsUrl}**`);
}

function send(apiKey: string, organizationId: string, to = 'ada@example.org', subject = 'Hello'): Promise<number> {
  return fetch(stack.sendUrl, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ OrganizationId: organizationId, Messages: [{ From: 'noreply@example.com', To: [to], Subject: subject, TextContent: 'Hi' }] }),
  }).then((response) => response.status);
}

/**
 * The browser globals the in-page callbacks use, which this Node program has no types for. Each
 * callback says `globalThis as unknown as InPage` itself (it runs in the page, on its own), and
 * is a function, not a string: the page's policy rightly forbids evaluating strings.
 */
interface InPage {
  readonly document: {
    readonly activeElement: { readonly textContent: string | null } | null;
    querySelector(selector: string): { readonly value: string; closest(selector: string): unknown } | null;
  };
  readonly navigator: { readonly clipboard: { readText(): Promise<string>; writeText(text: string): Promise<void> } };
  readonly localStorage: Record<string, string>;
  readonly sessionStorage: Record<string, string>;
  readonly location: { readonly origin: string };
}

const clipboard = (page: Page) => page.evaluate(() => (globalThis as unknown as InPage).navigator.clipboard.readText());
const focusedText = (page: Page) => page.evaluate(() => (globalThis as unknown as InPage).document.activeElement?.textContent ?? null);

/** Everything the browser keeps for the page: its storage and cookies, to prove a key is not in them. */
async function kept(page: Page, context: BrowserContext): Promise<string> {
  const storage = await page.evaluate(() => {
    const { localStorage, sessionStorage } = globalThis as unknown as InPage;
    return JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage } });
  });
  return `${storage} ${JSON.stringify(await context.cookies())} ${page.url()}`;
}

describe('the settings page', () => {
  it('makes the user\'s own key with scopes, an expiry or in test mode, and shows what the key may do and when it was last used', async () => {
    const email = 'lin@acme-limits.example';
    const { id: organizationId } = await adminJson(env, 'org', 'create', '--name', 'Acme Limits');
    const { id: userId } = await adminJson(env, 'user', 'create', '--email', email);
    await adminJson(env, 'member', 'add', '--org', organizationId, '--user', userId);
    await adminJson(env, 'sender', 'add', '--org', organizationId, '--domain', 'example.com');
    const { page, errors } = await newPage();
    await signIn(page, email);
    await page.getByText('You have no API key').waitFor();

    // Only "status", for 90 days: the key cannot send.
    const options = page.getByRole('group', { name: 'For the next key you generate or rotate' });
    for (const scope of ['send', 'cancel', 'templates']) await options.getByRole('checkbox', { name: scope, exact: true }).uncheck();
    await options.getByLabel('Expires').selectOption('90d');
    await page.getByRole('button', { name: 'Generate New Key' }).click();
    const field = page.getByRole('textbox', { name: 'API key' });
    await field.waitFor();
    const limited = await field.inputValue();
    expect(await send(limited, organizationId)).toBe(403);
    await page.reload();
    await page.getByText(`tme_…${limited.slice(-4)}`).waitFor();
    await expect(page.locator('#key-scopes').textContent()).resolves.toBe('status');
    await expect(page.locator('#key-expires').textContent()).resolves.not.toBe('never');
    await expect(page.locator('#key-last-used').textContent()).resolves.toMatch(/\(to the hour\)$/);
    expect((await adminJson(env, 'key', 'show', '--user', userId)).scopes).toEqual(['status']);

    // No scope at all is refused on the page, and nothing changes (the reload set the form back to every scope).
    for (const scope of ['send', 'status', 'cancel', 'templates']) await options.getByRole('checkbox', { name: scope, exact: true }).uncheck();
    page.once('dialog', (dialog) => dialog.accept());
    await page.getByRole('button', { name: 'Rotate Key' }).click();
    await page.getByText('Choose at least one scope for the new key.').waitFor();
    expect(await send(limited, organizationId)).toBe(403);

    // Test mode, every scope: a tme_test_ key that sends, and nothing reaches SES.
    for (const scope of ['send', 'status', 'cancel', 'templates']) await options.getByRole('checkbox', { name: scope, exact: true }).check();
    await options.getByLabel('Expires').selectOption('');
    await options.getByRole('checkbox', { name: /Test mode/ }).check();
    page.once('dialog', (dialog) => dialog.accept());
    await page.getByRole('button', { name: 'Rotate Key' }).click();
    await page.waitForFunction(() => (globalThis as unknown as InPage).document.querySelector('#new-key')?.value.startsWith('tme_test_') === true);
    const testKey = await page.getByRole('textbox', { name: 'API key' }).inputValue();
    await expect(page.locator('#key-scopes').textContent()).resolves.toBe('all (test mode: nothing reaches Amazon SES)');
    expect(await send(testKey, organizationId, 'ada@example.org', 'Dry run')).toBe(200);

    // Activity marks the test message, and the scheduled one a test key made, as test mode.
    const sendAt = new Date(Date.now() + 3_600_000).toISOString().slice(0, 19).replace('T', ' ');
    const scheduled = await fetch(stack.sendUrl, {
      method: 'POST',
      headers: { authorization: `Bearer ${testKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ OrganizationId: organizationId, Messages: [{ From: 'noreply@example.com', To: ['ada@example.org'], Subject: 'Dry run later', TextContent: 'Hi', SendAt: sendAt }] }),
    });
    expect(scheduled.status).toBe(200);
    await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Activity' }).click();
    const sent = page.locator('#activity-rows').getByRole('row', { name: /Dry run/ });
    await sent.waitFor();
    await expect(sent.getByRole('cell').nth(3).textContent()).resolves.toMatch(/^\w+ Test$/);
    await expect(sent.getByTitle('Sent with a test key: nothing reached Amazon SES').count()).resolves.toBe(1);
    const waiting = page.locator('#scheduled-rows').getByRole('row', { name: /Dry run later/ });
    await waiting.waitFor();
    await expect(waiting.getByRole('cell', { name: 'Dry run later Test' }).count()).resolves.toBe(1);
    expect(errors).toEqual([]);
  });

  it('takes a user from sign-in to a working key, through rotate, Organizations, revoke and sign-out', async () => {
    const email = 'ada@acme-shipping.example';
    const { id: organizationId } = await adminJson(env, 'org', 'create', '--name', 'Acme Shipping');
    const { id: userId } = await adminJson(env, 'user', 'create', '--email', email);
    await adminJson(env, 'member', 'add', '--org', organizationId, '--user', userId);
    await adminJson(env, 'sender', 'add', '--org', organizationId, '--domain', 'example.com');
    await adminJson(env, 'org', 'limits', '--org', organizationId, '--daily', '1000');
    await adminJson(env, 'org', 'tracking', '--org', organizationId, '--clicks', 'on');
    const { context, page, errors } = await newPage();

    await signIn(page, email);
    // Profile menu (top right), labelled with the user's e-mail; its menu has Settings.
    const profile = page.getByRole('button', { name: email });
    await profile.click();
    await expect(page.getByRole('menu').isVisible()).resolves.toBe(true);
    await page.getByRole('menuitem', { name: 'Settings' }).click();
    const side = page.getByRole('navigation', { name: 'Settings' });
    expect(await side.textContent()).toMatch(/User Settings\s*API Key\s*Organizations\s*Activity\s*Suppressions/);
    await side.getByRole('link', { name: 'API Key' }).click();

    // No key: the text, and Generate New Key.
    await page.getByText('You have no API key').waitFor();
    await page.getByRole('button', { name: 'Generate New Key' }).click();
    const field = page.getByRole('textbox', { name: 'API key' });
    await field.waitFor();
    const key = await field.inputValue();
    expect(key).toMatch(/^tme_[0-9A-Za-z]{49}$/);
    await expect(field.getAttribute('readonly')).resolves.not.toBeNull();
    await expect(page.getByText('You can show and copy it here again whenever you are signed in').isVisible()).resolves.toBe(true);
    await page.getByRole('button', { name: 'Copy', exact: true }).first().click();
    await expect(clipboard(page)).resolves.toBe(key);
    expect(await send(key, organizationId)).toBe(200);
    expect(await kept(page, context)).not.toContain(key);

    // After a reload: the masked form and its time; Copy copies the full key without showing it.
    await page.reload();
    await page.getByText(`tme_…${key.slice(-4)}`).waitFor();
    expect(await page.getByRole('textbox', { name: 'API key' }).count()).toBe(0);
    expect(await page.content()).not.toContain(key);
    await page.getByRole('button', { name: 'Rotate Key' }).waitFor();
    if (process.env.UPDATE_SCREENSHOTS === '1') await writeFile(new URL('../../docs/settings-page.png', import.meta.url), await page.screenshot());
    await page.evaluate(() => (globalThis as unknown as InPage).navigator.clipboard.writeText(''));
    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    await page.waitForFunction(() => (globalThis as unknown as InPage).navigator.clipboard.readText().then((text) => text.startsWith('tme_')));
    await expect(clipboard(page)).resolves.toBe(key);
    expect(await page.getByRole('textbox', { name: 'API key' }).count()).toBe(0);
    // Show puts it in the read-only field; a second press hides it. By keyboard.
    const showButton = page.getByRole('button', { name: 'Show' });
    await showButton.focus();
    await page.keyboard.press('Enter');
    await expect(page.getByRole('textbox', { name: 'API key' }).inputValue()).resolves.toBe(key);
    await expect(showButton.getAttribute('aria-pressed')).resolves.toBe('true');
    await page.keyboard.press('Enter');
    await page.getByRole('textbox', { name: 'API key' }).waitFor({ state: 'hidden' });
    expect(await kept(page, context)).not.toContain(key);

    // Rotate, confirmed: the new key, the old one refused.
    page.once('dialog', (dialog) => dialog.accept());
    await page.getByRole('button', { name: 'Rotate Key' }).click();
    await page.waitForFunction((old) => {
      const input = (globalThis as unknown as InPage).document.querySelector('#new-key');
      return input !== null && !input.closest('[hidden]') && input.value.startsWith('tme_') && input.value !== old;
    }, key);
    const rotated = await page.getByRole('textbox', { name: 'API key' }).inputValue();
    expect([await send(key, organizationId), await send(rotated, organizationId)]).toEqual([401, 200]);

    // A cancelled confirmation changes nothing.
    page.once('dialog', (dialog) => dialog.dismiss());
    await page.getByRole('button', { name: 'Revoke Key' }).click();
    expect(await send(rotated, organizationId)).toBe(200);

    // Organizations: name and id, with a Copy button for the id; the limits and today's use.
    await side.getByRole('link', { name: 'Organizations' }).click();
    const row = page.getByRole('row', { name: /Acme Shipping/ });
    await expect(row.textContent()).resolves.toContain(organizationId);
    // Read again as the panel opens: three messages sent since the page loaded.
    await row.getByRole('cell', { name: '3 of 1,000' }).waitFor();
    await expect(row.getByRole('cell', { name: '1,000 a day' }).count()).resolves.toBe(1);
    // Its default tracking, as the operator set it (`org tracking`).
    await expect(row.getByRole('cell', { name: 'clicks', exact: true }).count()).resolves.toBe(1);
    // Its sending reputation (nothing sent from this Organization yet in the window counted by events).
    await expect(row.textContent()).resolves.toMatch(/\d+ sent, bounces [\d.]+ %, complaints [\d.]+ %/);
    await row.getByRole('button', { name: 'Copy' }).click();
    await expect(clipboard(page)).resolves.toBe(organizationId);

    // A message that bounces: Activity finds it by its recipient, with its status and Organization.
    const bounced = 'bounce@simulator.amazonses.com';
    expect(await send(rotated, organizationId, bounced, '<img src=x onerror=alert(1)>Invoice')).toBe(200);
    await side.getByRole('link', { name: 'Activity' }).click();
    await page.getByRole('heading', { name: 'Activity' }).waitFor();
    await page.getByLabel('Recipient').fill(bounced);
    const found = page.getByRole('row', { name: /bounce@simulator/ });
    for (let attempt = 0; attempt < 20 && !(await found.textContent({ timeout: 250 }).catch(() => ''))?.includes('Bounced'); attempt++) {
      await page.getByRole('button', { name: 'Search' }).click();
    }
    // Untracked: no opens, no clicks, in their own columns before the Organization.
    await expect(found.textContent()).resolves.toMatch(/Bounced00Acme Shipping/);
    // The subject is shown as the text it is, never as markup.
    await expect(found.getByRole('cell', { name: '<img src=x onerror=alert(1)>Invoice' }).count()).resolves.toBe(1);
    expect(await page.getByRole('img').count()).toBe(0);

    // Suppressions: the bounced address, removed after confirming.
    await side.getByRole('link', { name: 'Suppressions' }).click();
    // Within the Suppressions panel, once its list is there (the Activity panel holds the address too).
    const suppressed = page.locator('#suppressions-rows').getByRole('row', { name: new RegExp(bounced) });
    await suppressed.waitFor();
    await expect(suppressed.textContent()).resolves.toMatch(/Acme Shipping.*Bounce/);
    page.once('dialog', (dialog) => dialog.accept());
    await suppressed.getByRole('button', { name: `Remove ${bounced}` }).click();
    await page.getByText(`${bounced} was removed`).waitFor();
    expect(await adminJson(env, 'suppression', 'list', '--org', organizationId)).toEqual({ addresses: [] });

    // Only the access token opens the settings API: the ID token the page also holds is refused.
    const tokens = await page.evaluate(() => {
      const { sessionStorage } = globalThis as unknown as InPage;
      const name = Object.keys(sessionStorage).find((each) => each.startsWith('oidc.user'));
      return JSON.parse(name ? sessionStorage[name]! : '{}') as { id_token?: string; access_token?: string };
    });
    const asBearer = (token: string | undefined) => fetch(`${stack.apiUrl}/v1.2/me`, { headers: { authorization: `Bearer ${token}` } }).then((response) => response.status);
    expect([await asBearer(tokens.id_token), await asBearer(tokens.access_token)]).toEqual([401, 200]);

    // Revoke, confirmed.
    await side.getByRole('link', { name: 'API Key' }).click();
    page.once('dialog', (dialog) => dialog.accept());
    await page.getByRole('button', { name: 'Revoke Key' }).click();
    await page.getByText('You have no API key').waitFor();
    expect(await send(rotated, organizationId)).toBe(401);

    // The profile menu by keyboard: arrows move, Escape closes and gives focus back.
    await profile.focus();
    await page.keyboard.press('ArrowDown');
    await expect(focusedText(page)).resolves.toBe('Settings');
    await page.keyboard.press('ArrowDown');
    await expect(focusedText(page)).resolves.toBe('Sign out');
    await page.keyboard.press('Escape');
    await expect(page.getByRole('menu').count()).resolves.toBe(0);
    await expect(profile.evaluate((element) => element === (globalThis as unknown as InPage).document.activeElement)).resolves.toBe(true);

    // Sign out ends the provider's session too: "Sign in" asks for the e-mail again.
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${stack.settingsUrl}**`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Email').waitFor();
    expect(await page.evaluate(() => Object.keys((globalThis as unknown as InPage).sessionStorage).filter((name) => name.startsWith('oidc.user')))).toEqual([]);

    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);

  it('lists scheduled messages in Activity with Cancel, and lets rotate keep them or cancel them', async () => {
    const email = 'grace@acme-shipping.example';
    const { id: organizationId } = await adminJson(env, 'org', 'create', '--name', 'Acme Later');
    const { id: userId } = await adminJson(env, 'user', 'create', '--email', email);
    await adminJson(env, 'member', 'add', '--org', organizationId, '--user', userId);
    await adminJson(env, 'sender', 'add', '--org', organizationId, '--domain', 'example.com');
    const { key } = await adminJson(env, 'key', 'generate', '--user', userId);
    const sendAt = new Date(Math.ceil((Date.now() + 3_600_000) / 1_000) * 1_000).toISOString().slice(0, 19).replace('T', ' ');
    const schedule = async (subject: string) => {
      const response = await fetch(stack.sendUrl, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ OrganizationId: organizationId, Messages: [{ From: 'noreply@example.com', To: ['ada@example.org'], Subject: subject, TextContent: 'Later', SendAt: sendAt }] }),
      });
      return ((await response.json()) as { Messages: { ScheduleId: string }[] }).Messages[0]!.ScheduleId;
    };
    const waiting = async () => ((await adminJson(env, 'schedule', 'list', '--org', organizationId)).schedules as { scheduleId: string }[]).map((s) => s.scheduleId);
    const stopped = await schedule('<b>Quarterly</b> report');
    expect(await waiting()).toEqual([stopped]);
    const { page, context, errors } = await newPage();
    await signIn(page, email);
    const side = page.getByRole('navigation', { name: 'Settings' });
    await side.getByRole('link', { name: 'Activity' }).click();
    const row = page.locator('#scheduled-rows').getByRole('row', { name: /Quarterly/ });
    await row.waitFor();
    await expect(row.textContent()).resolves.toMatch(new RegExp(`${sendAt}.*ada@example.org.*<b>Quarterly</b> report.*Acme Later`));
    page.once('dialog', (dialog) => dialog.accept());
    await row.getByRole('button', { name: /^Cancel the message to ada@example.org/ }).click();
    await page.getByText('was cancelled; it will not be sent').waitFor();
    expect(await waiting()).not.toContain(stopped);
    await page.getByText('No scheduled messages are waiting.').waitFor();

    // Rotate with "Keep my scheduled messages" ticked keeps them; unticked (the default) cancels them.
    const kept = await schedule('Kept');
    await side.getByRole('link', { name: 'API Key' }).click();
    await expect(page.getByLabel('Keep my scheduled messages').isChecked()).resolves.toBe(false);
    await page.getByLabel('Keep my scheduled messages').check();
    page.once('dialog', (dialog) => dialog.accept());
    await page.getByRole('button', { name: 'Rotate Key' }).click();
    await page.getByText('Your key was rotated.').waitFor();
    expect(await waiting()).toEqual([kept]);
    await page.getByLabel('Keep my scheduled messages').uncheck();
    page.once('dialog', (dialog) => dialog.accept());
    await page.getByRole('button', { name: 'Rotate Key' }).click();
    await page.getByText('Your key was rotated.').waitFor();
    for (let attempt = 0; attempt < 20 && (await waiting()).length > 0; attempt++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await waiting()).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);

  it('says a key made by the admin CLI cannot be shown again, and offers Rotate', async () => {
    const email = 'bo@acme-shipping.example';
    const { id: userId } = await adminJson(env, 'user', 'create', '--email', email);
    const { key } = await adminJson(env, 'key', 'generate', '--user', userId);
    const { context, page, errors } = await newPage();
    await signIn(page, email);
    await page.getByText(`tme_…${key.slice(-4)}`).waitFor();
    await expect(page.getByText('This key cannot be shown again').isVisible()).resolves.toBe(true);
    for (const name of ['Show', 'Copy']) expect(await page.getByRole('button', { name, exact: true }).count()).toBe(0);
    page.once('dialog', (dialog) => dialog.accept());
    await page.getByRole('button', { name: 'Rotate Key' }).click();
    const field = page.getByRole('textbox', { name: 'API key' });
    await field.waitFor();
    expect(await field.inputValue()).not.toBe(key);
    await expect(page.getByRole('button', { name: 'Show' }).isVisible()).resolves.toBe(true);
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);

  it('shows an e-mail with no service user a no-access page, and nothing else', async () => {
    const { context, page } = await newPage();
    await signIn(page, 'stranger@example.org');
    await page.getByRole('heading', { name: 'No access' }).waitFor();
    await expect(page.getByText('stranger@example.org').isVisible()).resolves.toBe(true);
    for (const name of ['Generate New Key', 'Rotate Key', 'Revoke Key']) expect(await page.getByRole('button', { name }).count()).toBe(0);
    expect(await page.getByRole('navigation', { name: 'Settings' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'stranger@example.org' }).count()).toBe(0);
    await context.close();
  }, 60_000);

  it('is served under a policy that forbids inline script and framing', async () => {
    const response = await fetch(stack.settingsUrl);
    const policy = response.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("script-src 'self'");
    expect(policy).not.toContain('unsafe-inline');
    expect(policy).toContain("frame-ancestors 'none'");
    expect(await response.text()).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  });
});
