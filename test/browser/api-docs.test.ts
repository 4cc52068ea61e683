// The browser harness end to end: the real app serves its API reference (Swagger UI at /docs) and
// Debian's Chromium renders it at a laptop and a phone width. Proves Chromium is installed, starts
// here, reaches the app on loopback and runs its JavaScript, before the reviewer console's tests
// build on it.
import { describe, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import { consoleErrors, screenshot, useBrowser } from '../support/browser.ts';
import type { ViewportName } from '../support/browser.ts';
import { useTestApp } from '../support/harness.ts';

const ctx = useTestApp({ listen: true });
const chromium = useBrowser();

// Swagger UI gives each operation the id operations-<tag>-<operationId>.
const operation = (page: Page, operationId: string) => page.locator(`#operations-product-runtime-${operationId}`);

describe('the API reference in Chromium', () => {
  for (const viewport of ['laptop', 'phone'] as const satisfies readonly ViewportName[]) {
    test(`lists the Product Runtime operations and expands one (${viewport})`, async () => {
      const page = await chromium.newPage({ viewport });
      const errors = consoleErrors(page);
      const response = await page.goto(`${ctx.url}/docs`);
      expect(response?.status()).toBe(200);

      // The operations exist only once Swagger UI has fetched and rendered the OpenAPI document: on a
      // loaded 2-core machine (the whole suite beside it) that took more than the page's default 10 s
      // once, so the first wait has the test's time.
      for (const operationId of ['uploadAudio', 'startGoogleConnection']) {
        const summary = operation(page, operationId).locator('.opblock-summary');
        await summary.waitFor({ timeout: 25_000 });
        expect(await summary.innerText()).toContain(operationId);
      }

      // Collapsed, an operation shows its summary only; expanded, its description too.
      const start = operation(page, 'startGoogleConnection');
      const description = start.locator('.opblock-description-wrapper', { hasText: 'Needs connections.manage' });
      expect(await description.count()).toBe(0);
      await start.locator('.opblock-summary-control').click();
      await description.waitFor();
      await start.scrollIntoViewIfNeeded();

      await screenshot(page, `api-docs-${viewport}`);
      expect(errors).toEqual([]);
    });
  }
});
