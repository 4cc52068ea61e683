// Global setup of the `browser` test project: make sure Debian's Chromium is installed (once per run,
// by scripts/ensure-chromium.sh, which installs it with apt-get on a clean CI machine) and tell the
// test files where it is. Postgres and Temporal come from test/global-setup.ts, listed beside this.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    chromiumPath: string;
  }
}

const script = fileURLToPath(new URL('../../scripts/ensure-chromium.sh', import.meta.url));

export default function setup(project: TestProject) {
  const chromiumPath = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
  // An install takes a while: allow it minutes, but never hang the run forever.
  const result = spawnSync('bash', [script], { encoding: 'utf8', timeout: 600_000 });
  if (result.status !== 0) {
    process.stdout.write(result.stdout ?? '');
    process.stderr.write(result.stderr ?? '');
    throw new Error(`scripts/ensure-chromium.sh failed (${result.error?.message ?? `exit ${result.status ?? result.signal}`}); the browser tests need Debian's chromium`);
  }
  console.log(`browser tests: ${result.stdout.trim()} at ${chromiumPath}`);
  project.provide('chromiumPath', chromiumPath);
}
