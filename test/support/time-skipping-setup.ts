// Global setup of the `workflows` test project: find (or install, once per run rather than once per
// file) Temporal's time-skipping test server. No Postgres, no dev server.
import type { TestProject } from 'vitest/node';
import { resolveTemporalTestServer } from '../../platform/local-stack/temporal-test-server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalTestServerPath: string;
  }
}

export default function setup(project: TestProject) {
  project.provide('temporalTestServerPath', resolveTemporalTestServer(process.env, (msg) => console.log(msg)));
}
