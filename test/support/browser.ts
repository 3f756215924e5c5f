/**
 * A real browser for the pages the local stack serves: the system's Chromium driven by
 * playwright-core (which downloads no browser of its own). A missing Chromium fails the test
 * that needs it, with what to do, rather than skipping it unnoticed; `.ci/run` installs it.
 */
import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { chromium } from 'playwright-core';

const CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium'];

// Headless, and nothing of Chromium's own that would reach the network (updates, sync, QUIC probes).
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export async function launchChromium(): Promise<Browser> {
  const executablePath = CANDIDATES.find((path): path is string => path !== undefined && path !== '' && existsSync(path));
  if (executablePath === undefined) {
    throw new Error('No Chromium found: install it (Debian: apt-get install -y chromium) or set CHROMIUM_PATH to its executable.');
  }
  return chromium.launch({ executablePath, args: ARGS });
}
