import { fileURLToPath } from 'node:url';
import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

// @hosted-notes/runtime-sdk resolves to its TypeScript sources here, never to its build (dist/ may
// not exist): vite's resolver and the test workers' Node get the package's source condition, and
// so does every process a test spawns with process.env, also when vitest is started without npm
// (whose .npmrc node-options does the same). docs/decisions.md 84.
const SOURCE_CONDITION = '@hosted-notes/source';
if (!(process.env['NODE_OPTIONS'] ?? '').includes(`--conditions=${SOURCE_CONDITION}`)) {
  process.env['NODE_OPTIONS'] = `${process.env['NODE_OPTIONS'] ?? ''} --conditions=${SOURCE_CONDITION}`.trim();
}
// Node's compile cache for the processes tests spawn (the CLI, APIs, workers, the partner example):
// each start strips and compiles the same TypeScript again otherwise, ~0.4 s of CPU of the ~0.7 s
// a `scripts/ops.ts --help` takes on this machine. Kept under .data/ (ignored), per checkout.
process.env['NODE_COMPILE_CACHE'] ??= fileURLToPath(new URL('./.data/node-compile-cache', import.meta.url));
// Vitest hands the same list to its workers as --conditions (vite's defaults for Node, less `module`, as vitest's own).
export const sourceResolution = { resolve: { conditions: [SOURCE_CONDITION, ...defaultServerConditions.filter((c) => c !== 'module')] } };

// Tests that need neither Postgres nor Temporal: they skip the integration set-up entirely.
const unit = [
  'test/canvas.test.ts',
  'test/lint-layers.test.ts',
  'test/start-logging.test.ts',
  'test/webhook-delivery-failures.test.ts',
  'test/runtime-sdk-ndjson.test.ts',
  'test/db-timestamps.test.ts',
  'test/group-commit-batches.test.ts',
  'test/runtime-sdk-hosted.test.ts',
  'test/runtime-sdk-notes.test.ts',
  'test/runtime-sdk-local.test.ts',
  'test/runtime-sdk-package.test.ts',
  'test/intelligence-units.test.ts',
  'test/education-context.test.ts',
  'test/safety-corpus.test.ts',
  'test/media-upload-rules.test.ts',
  'test/media-inspection.test.ts',
  'test/media-s3-store.test.ts',
  'test/connections-google-client.test.ts',
  'test/runtime-sdk-connections.test.ts',
  'test/console-pages.test.ts',
  'test/topology-config.test.ts',
];
// Workflow tests on the time-skipping test server with stubbed activities (test/support/time-skipping.ts).
const workflows = ['test/workflows/**/*.test.ts'];

// `npm test` runs every project; `npm run test:unit` only the two without Postgres and Temporal.
export default defineConfig({
  ssr: sourceResolution,
  test: {
    setupFiles: ['test/support/quiet-temporal.ts'],
    pool: 'forks',
    // Two files at a time on this 2-core machine (vitest's default is cores − 1 = one): most tests
    // wait on Postgres, Temporal or a timer, not on the CPU, and each file has its own database and
    // task queue. The suite's wall time fell from ~685 s to the figure in the latest issue note.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
    reporters: ['default'],
    projects: [
      { extends: true, test: { name: 'unit', include: unit } },
      { extends: true, test: { name: 'workflows', include: workflows, globalSetup: ['test/support/time-skipping-setup.ts'] } },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          // test/external/: opt-in checks against third-party servers (`npm run test:litellm`).
          exclude: [...unit, ...workflows, 'test/external/**'],
          // One Postgres template and one Temporal dev server for the whole run (test/global-setup.ts);
          // each test file clones its own database from the template.
          globalSetup: ['test/global-setup.ts'],
        },
      },
    ],
  },
});
