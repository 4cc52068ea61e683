// The SDK's root entry in a browser: the package's build (its one script, into a folder of this
// file's own so it never races another test's dist/) loaded as ES modules in Debian's Chromium, with
// zod's ESM files through an import map and nothing bundled, calling the live API with an
// installation's credential. The page is served from the API's own origin (Playwright answers
// /sdk-test/** from disk; everything else reaches the app), so no CORS is involved.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleErrors, useBrowser } from '../support/browser.ts';
import { useTestApp } from '../support/harness.ts';
import { buildRuntimeChain } from '../support/product-runtime.ts';
import type { RuntimeChain } from '../support/product-runtime.ts';

const repo = resolve(import.meta.dirname, '../..');
const zodRoot = join(repo, 'node_modules/zod');

const ctx = useTestApp({ listen: true });
const chromium = useBrowser();
let chain: RuntimeChain;
let dist: string;

beforeAll(async () => {
  chain = await buildRuntimeChain(ctx.db.pool);
  dist = await mkdtemp(join(tmpdir(), 'hnp-sdk-browser-'));
  await promisify(execFile)(process.execPath, [join(repo, 'packages/runtime-sdk/build.ts'), '--out-dir', dist], { cwd: repo, timeout: 120_000 });
}, 120_000);

afterAll(async () => {
  if (dist) await rm(dist, { recursive: true, force: true });
});

// The page's own module does what a partner's front end would; the test calls it with the credential.
// (Inside tab.evaluate an import() would be rewritten by vitest's transform.)
const page = `<!doctype html>
<html><head><meta charset="utf-8"><title>runtime-sdk in a browser</title>
<script type="importmap">{ "imports": { "zod": "/sdk-test/zod/index.js" } }</script>
<script type="module">
  import { createHostedRuntime, RuntimeError } from '/sdk-test/sdk/index.js';
  window.sdkCheck = async (credential) => {
    const runtime = createHostedRuntime({ baseUrl: location.origin, credential });
    const capabilities = await runtime.getCapabilities();
    const refused = await runtime.readNote('00000000-0000-4000-8000-000000000000', 'Units/Unit 1.md').then(
      () => null,
      (error) => ({ isRuntimeError: error instanceof RuntimeError, code: error.code }),
    );
    return {
      kind: capabilities.kind,
      status: capabilities.status,
      adapter: capabilities.data?.adapter,
      available: capabilities.data?.capabilities.filter((c) => c.available).map((c) => c.id),
      refused,
      hasProcess: typeof globalThis.process !== 'undefined',
    };
  };
  window.sdkReady = true;
</script>
</head><body></body></html>`;

type SdkCheck = { kind: string; status: string; adapter?: string; available?: string[]; refused: { isRuntimeError: boolean; code?: string } | null; hasProcess: boolean };

/** A file under `root`, or null for anything outside it. */
async function fileUnder(root: string, relativePath: string): Promise<Buffer | null> {
  const path = normalize(join(root, decodeURIComponent(relativePath)));
  if (!path.startsWith(root + sep)) return null;
  return readFile(path).catch(() => null);
}

describe('the root entry in Chromium', () => {
  it('createHostedRuntime(…).getCapabilities() from a page: the envelope of the live API', async () => {
    const tab = await chromium.newPage();
    const errors = consoleErrors(tab);
    const served: string[] = [];
    await tab.route(`${ctx.url}/sdk-test/**`, async (route) => {
      const path = new URL(route.request().url()).pathname.slice('/sdk-test/'.length);
      served.push(path);
      if (path === 'index.html') return route.fulfill({ contentType: 'text/html', body: page });
      const [root, rest] = path.startsWith('zod/') ? [zodRoot, path.slice(4)] : path.startsWith('sdk/') ? [dist, path.slice(4)] : [null, ''];
      const body = root ? await fileUnder(root, rest) : null;
      if (!body) return route.fulfill({ status: 404, body: 'not found' });
      return route.fulfill({ contentType: extname(path) === '.js' ? 'text/javascript' : 'application/octet-stream', body });
    });

    await tab.goto(`${ctx.url}/sdk-test/index.html`);
    await tab.waitForFunction(() => (globalThis as unknown as { sdkReady?: boolean }).sdkReady === true);
    const answer = await tab.evaluate((credential) => (globalThis as unknown as { sdkCheck(c: string): Promise<SdkCheck> }).sdkCheck(credential), chain.secret);

    expect(answer).toMatchObject({ kind: 'runtime.capabilities', status: 'complete', adapter: 'hosted', hasProcess: false });
    expect(answer.available).toEqual(expect.arrayContaining(['notes.read', 'notes.write']));
    // A refusal crosses into the page as the SDK's own RuntimeError with the service's code.
    expect(answer.refused).toEqual({ isRuntimeError: true, code: 'vault_not_granted' });
    expect(served).toEqual(expect.arrayContaining(['index.html', 'sdk/index.js', 'sdk/hosted.js', 'zod/index.js']));
    expect(served.filter((path) => path.startsWith('sdk/')).every((path) => !path.includes('local') && !path.includes('notes.js'))).toBe(true);
    // Chromium logs every 4xx fetch; the refusal above is the only one, and nothing else went wrong.
    expect(errors).toEqual(['Failed to load resource: the server responded with a status of 403 (Forbidden)']);
  });
});
