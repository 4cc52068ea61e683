// Applies db/migrations/*.sql under node-pg-migrate's advisory lock, so an API and a worker
// starting together never migrate twice; the second waits for the first.
import { fileURLToPath } from 'node:url';
import { runner } from 'node-pg-migrate';

export const migrationsDir = fileURLToPath(new URL('./migrations', import.meta.url));

export async function migrate(databaseUrl: string, log: (msg: string) => void = () => {}): Promise<string[]> {
  const applied = await runner({
    databaseUrl,
    dir: migrationsDir,
    direction: 'up',
    migrationsTable: 'schema_migrations',
    advisoryLockMode: 'wait',
    checkOrder: true,
    singleTransaction: true,
    log,
    verbose: false,
  });
  return applied.map((m) => m.name);
}
