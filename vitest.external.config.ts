import { defineConfig } from 'vitest/config';
import { sourceResolution } from './vitest.config.ts';

// Opt-in checks against maintained third-party servers that take minutes to install (LiteLLM's
// proxy): `npm run test:litellm`. Not part of `npm test`; same Postgres and Temporal set-up.
export default defineConfig({
  ssr: sourceResolution,
  test: {
    setupFiles: ['test/support/quiet-temporal.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 180_000,
    include: ['test/external/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
  },
});
