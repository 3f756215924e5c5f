/**
 * Debian's Chromium driven by playwright-core (Playwright's own browser download cannot work
 * here). `.ci/run` installs the `chromium` package when it is missing; a machine without it fails
 * these tests with a message that says so, rather than skipping them.
 */
import { existsSync } from 'node:fs';
import type { Browser, ConsoleMessage, Page } from 'playwright-core';
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`No Chromium at ${CHROMIUM}: install Debian's package (apt-get install -y chromium) or set CHROMIUM_PATH.`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    // Without the background-networking flags Chromium keeps trying hosts this closed network refuses.
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** Every console error and uncaught exception of the page, in the order they happened. */
export function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message: ConsoleMessage) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => errors.push(`uncaught: ${error.message}`));
  return errors;
}
