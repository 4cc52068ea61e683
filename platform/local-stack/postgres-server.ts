// Finds a Postgres server to create databases on, for the test harness and the benchmarks:
// TEST_DATABASE_URL or DATABASE_URL wins; then the libpq PG* conventions (default
// postgres@127.0.0.1:5432); when nothing answers there, a real embedded server under .data/.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startEmbeddedPostgres } from './embedded-postgres.ts';
import type { EmbeddedServer } from './embedded-postgres.ts';
import { canConnect } from './ports.ts';
import { projectRoot } from '../project-root.ts';

export async function findOrStartPostgres(env: NodeJS.ProcessEnv, embeddedDirName: string): Promise<{ adminUrl: string; embedded: EmbeddedServer | null }> {
  const explicit = env['TEST_DATABASE_URL'] ?? env['DATABASE_URL'];
  if (explicit) return { adminUrl: explicit, embedded: null };
  const host = env['PGHOST'] ?? '127.0.0.1';
  const port = Number(env['PGPORT'] ?? 5432);
  const user = encodeURIComponent(env['PGUSER'] ?? 'postgres');
  const password = env['PGPASSWORD'] ? `:${encodeURIComponent(env['PGPASSWORD'])}` : '';
  if (!host.startsWith('/') && (await canConnect(host, port))) {
    return { adminUrl: `postgres://${user}${password}@${host}:${port}/${env['PGDATABASE'] ?? 'postgres'}`, embedded: null };
  }
  mkdirSync(join(projectRoot, '.data'), { recursive: true });
  const embedded = await startEmbeddedPostgres({ dataDir: join(projectRoot, '.data', embeddedDirName) });
  return { adminUrl: embedded.adminUrl, embedded };
}
