// Postgres and Temporal that a multi-process test can take away and give back: the test database
// behind a loopback proxy that refuses and resets connections on demand, and a Temporal dev server of
// the test's own that stops and starts again on the same port and SQLite file (the outage drill, the
// topology test).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../platform/local-stack/ports.ts';
import { resolveTemporalCli } from '../../platform/local-stack/temporal-cli.ts';
import { startTemporalDevServer } from '../../platform/local-stack/temporal-dev-server.ts';
import type { DevServer } from '../../platform/local-stack/temporal-dev-server.ts';
import { TcpProxy } from './tcp-proxy.ts';

export type OutageStack = {
  /** The proxy in front of Postgres: `pg.stop('reset')` cuts every connection, `pg.start()` lets them in again. */
  pg: TcpProxy;
  /** The database URL through the proxy. */
  databaseUrl: string;
  temporalAddress: string;
  stopTemporal: () => Promise<void>;
  /** Starts Temporal again on the same port and SQLite file (what it had recorded is kept). */
  startTemporal: () => Promise<void>;
  close: () => Promise<void>;
};

export async function startOutageStack(databaseUrl: string, name: string): Promise<OutageStack> {
  const target = new URL(databaseUrl);
  const pg = new TcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  await pg.start();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), `${name}-temporal-`));
  const start = () => startTemporalDevServer({ cliPath: resolveTemporalCli(), port, dbFilename: join(dir, 'temporal.sqlite'), headless: true });
  let temporal: DevServer | null = await start();
  return {
    pg,
    databaseUrl: pg.urlThrough(databaseUrl),
    temporalAddress: `127.0.0.1:${port}`,
    stopTemporal: async () => {
      await temporal?.stop();
      temporal = null;
    },
    startTemporal: async () => {
      temporal = await start();
    },
    close: async () => {
      await temporal?.stop();
      await pg.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
