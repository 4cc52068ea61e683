// One fresh database per test file, cloned from the run's migrated template (test/global-setup.ts).
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { createDatabasePool } from '../../db/pool.ts';
import type { DatabasePool } from '../../db/pool.ts';
import { createDatabase, dropDatabase, withDatabase } from '../../platform/local-stack/databases.ts';

export const TEST_DATABASE_PREFIX = 'hnp_test_';

export type TestDatabase = { url: string; name: string; pool: DatabasePool; drop: () => Promise<void> };

export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = inject('pgAdminUrl');
  const template = inject('pgTemplate');
  // The template's name carries the runner's pid; clones share it so teardown finds them all.
  const name = `${template.replace(/_template$/, '')}_${randomBytes(5).toString('hex')}`;
  await createDatabase(adminUrl, name, template);
  const url = withDatabase(adminUrl, name);
  const pool = await createDatabasePool(url, { maxPoolSize: 25 });
  return {
    url,
    name,
    pool,
    drop: async () => {
      await pool.end();
      await dropDatabase(adminUrl, name);
    },
  };
}
