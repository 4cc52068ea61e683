import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One Postgres template and one Temporal dev server for the whole run (test/global-setup.ts);
    // each test file clones its own database from the template.
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/support/quiet-temporal.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
    reporters: ['default'],
  },
});
