// Debian's Chromium driven by playwright-core, for the page tests in test/browser/ (integration
// tests: they start the real app). The first file that launches a browser makes sure Chromium is
// there (scripts/ensure-chromium.sh installs it with apt-get on a clean CI machine); a run without
// browser tests never looks for it.
import { spawnSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';

export const viewports = {
  laptop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
} as const;
export type ViewportName = keyof typeof viewports;

const screenshotDir = fileURLToPath(new URL('../../.data/artifacts/screenshots/', import.meta.url));
const ensureScript = fileURLToPath(new URL('../../scripts/ensure-chromium.sh', import.meta.url));

let chromiumPath: string | undefined;
/** The Chromium binary, installed first if missing (once per test process; ~0.1 s when present). */
function ensureChromium(): string {
  if (chromiumPath) return chromiumPath;
  // An install takes a while: allow it minutes, but never hang the run forever.
  const result = spawnSync('bash', [ensureScript], { encoding: 'utf8', timeout: 600_000 });
  if (result.status !== 0) {
    throw new Error(
      `scripts/ensure-chromium.sh failed (${result.error?.message ?? `exit ${result.status ?? result.signal}`}); the browser tests need Debian's chromium.\n${result.stdout}${result.stderr}`,
    );
  }
  chromiumPath = process.env['CHROMIUM_PATH'] || '/usr/bin/chromium';
  return chromiumPath;
}

/**
 * Headless Chromium with a fresh, empty profile (Playwright makes a temporary user-data-dir per
 * launch and refuses one in `args`). The flags keep it off the network: this machine's closed
 * network refuses Chromium's background connections, many at a time, and its lookups of Google's
 * hosts fail at every start.
 */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: ensureChromium(),
    headless: true,
    // Chromium will not start as root with its sandbox on; elsewhere keep it.
    chromiumSandbox: process.getuid?.() !== 0,
    args: ['--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

export type NewPageOptions = { viewport?: ViewportName };

export type BrowserSession = {
  browser: Browser;
  /** A page in a context of its own (no cookies or storage shared with other pages); laptop width unless told. */
  newPage(options?: NewPageOptions): Promise<Page>;
};

/** One Chromium for the file (beforeAll), closed with every context it made (afterAll). Read `browser` inside hooks and tests. */
export function useBrowser(): BrowserSession {
  const contexts: BrowserContext[] = [];
  const session: BrowserSession = {
    browser: undefined as unknown as Browser,
    async newPage(options = {}) {
      const phone = options.viewport === 'phone';
      // isMobile makes Chromium honour the page's meta viewport, as a phone does.
      const context = await session.browser.newContext({ viewport: viewports[options.viewport ?? 'laptop'], isMobile: phone, hasTouch: phone });
      // Below the test timeout, so a missing element fails with Playwright's message rather than vitest's.
      context.setDefaultTimeout(10_000);
      contexts.push(context);
      return context.newPage();
    },
  };
  beforeAll(async () => {
    session.browser = await launchChromium();
  });
  afterAll(async () => {
    for (const context of contexts) await context.close();
    await session.browser?.close();
  });
  return session;
}

/** Console errors and uncaught exceptions of the page from now on (the array fills as they happen). */
export function consoleErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  return errors;
}

/** Saves what the viewport shows (or the whole page) to .data/artifacts/screenshots/<name>.png (git-ignored); returns the path. */
export async function screenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<string> {
  await mkdir(screenshotDir, { recursive: true });
  const path = `${screenshotDir}${name}.png`;
  await page.screenshot({ path, fullPage: options.fullPage ?? false });
  return path;
}
