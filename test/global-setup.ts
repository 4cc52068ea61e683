// Once per test run: find or start a real Postgres, build a migrated template database, and start
// one real Temporal dev server. Test files receive their addresses through inject().
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { migrate } from '../db/migrate.ts';
import { createDatabase, dropDatabase, listDatabases, withDatabase } from '../platform/local-stack/databases.ts';
import { startEmbeddedPostgres } from '../platform/local-stack/embedded-postgres.ts';
import type { EmbeddedServer } from '../platform/local-stack/embedded-postgres.ts';
import { canConnect } from '../platform/local-stack/ports.ts';
import { projectRoot, resolveTemporalCli } from '../platform/local-stack/temporal-cli.ts';
import { startTemporalDevServer } from '../platform/local-stack/temporal-dev-server.ts';
import { TEST_DATABASE_PREFIX } from './support/database.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgTemplate: string;
    temporalAddress: string;
  }
}

/** DATABASE_URL (or TEST_DATABASE_URL) wins; then the PG* conventions; then an embedded server. */
async function resolvePostgres(): Promise<{ adminUrl: string; embedded: EmbeddedServer | null }> {
  const explicit = process.env['TEST_DATABASE_URL'] ?? process.env['DATABASE_URL'];
  if (explicit) return { adminUrl: explicit, embedded: null };
  const host = process.env['PGHOST'] ?? '127.0.0.1';
  const port = Number(process.env['PGPORT'] ?? 5432);
  const user = encodeURIComponent(process.env['PGUSER'] ?? 'postgres');
  const password = process.env['PGPASSWORD'] ? `:${encodeURIComponent(process.env['PGPASSWORD'])}` : '';
  if (!host.startsWith('/') && (await canConnect(host, port))) {
    return { adminUrl: `postgres://${user}${password}@${host}:${port}/${process.env['PGDATABASE'] ?? 'postgres'}`, embedded: null };
  }
  const dataDir = join(projectRoot, '.data', 'test-postgres');
  mkdirSync(join(projectRoot, '.data'), { recursive: true });
  const embedded = await startEmbeddedPostgres({ dataDir });
  return { adminUrl: embedded.adminUrl, embedded };
}

export default async function setup(project: TestProject) {
  const started = performance.now();
  const { adminUrl, embedded } = await resolvePostgres();
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
