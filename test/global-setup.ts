// Once per test run: find or start a real Postgres, build a migrated template database, and start
// one real Temporal dev server. Test files receive their addresses through inject().
import type { TestProject } from 'vitest/node';
import { migrate } from '../db/migrate.ts';
import { createDatabase, dropDatabase, listDatabases, withDatabase } from '../platform/local-stack/databases.ts';
import { findOrStartPostgres } from '../platform/local-stack/postgres-server.ts';
import { resolveTemporalCli } from '../platform/local-stack/temporal-cli.ts';
import { startTemporalDevServer } from '../platform/local-stack/temporal-dev-server.ts';
import { TEST_DATABASE_PREFIX } from './support/database.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgTemplate: string;
    temporalAddress: string;
  }
}

export default async function setup(project: TestProject) {
  const started = performance.now();
  const { adminUrl, embedded } = await findOrStartPostgres(process.env, 'test-postgres');
  const template = `${TEST_DATABASE_PREFIX}${process.pid}_template`;
  await dropDatabase(adminUrl, template);
  await createDatabase(adminUrl, template);
  await migrate(withDatabase(adminUrl, template));

  const cliPath = resolveTemporalCli(process.env, (msg) => console.log(msg));
  const temporal = await startTemporalDevServer({ cliPath, headless: true });

  project.provide('pgAdminUrl', adminUrl);
  project.provide('pgTemplate', template);
  project.provide('temporalAddress', temporal.address);
  console.log(
    `test harness: postgres ${embedded ? 'embedded' : new URL(adminUrl).host}, temporal ${temporal.address}, ready in ${Math.round(performance.now() - started)} ms`,
  );

  return async () => {
    await temporal.stop();
    for (const name of await listDatabases(adminUrl, `${TEST_DATABASE_PREFIX}${process.pid}_`)) await dropDatabase(adminUrl, name);
    await embedded?.stop();
  };
}
