// Debian's PgBouncer in transaction mode in front of one Postgres database, as a deployment behind
// a connection pooler runs it (decision 99): the APIs and workers connect here with
// DATABASE_POOLER=transaction; what needs a session (LISTEN, migrations) goes to Postgres directly
// (DATABASE_SESSION_URL).
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { createDatabasePool } from '../../db/pool.ts';
import { loadConfig } from '../config.ts';
import { freePort } from '../local-stack/ports.ts';
import { spawnOwned, stopChild } from './processes.ts';
import { ensureTool } from './tools.ts';

/** The session timeouts the pool cannot send through a transaction pooler, set server-side instead (here, and compose's deploy/postgres-init.sql: a test holds the file to these). */
export const STATEMENT_TIMEOUT_MS = loadConfig({}).DATABASE_STATEMENT_TIMEOUT_MS;
export const IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000;

export type PgBouncer = { url: string; stop: () => Promise<void> };

export async function startPgBouncer(options: {
  /** The database it pools (postgres://user[:password]@host:port/name). */
  targetUrl: string;
  port?: number;
  /** Server connections per database/user pair (PgBouncer's default_pool_size). */
  poolSize?: number;
  maxClientConnections?: number;
  /** Its own process group (scripts/topology.ts: the terminal's Ctrl-C reaches only the script). */
  detached?: boolean;
}): Promise<PgBouncer> {
  const binary = ensureTool('pgbouncer');
  const target = new URL(options.targetUrl);
  const database = decodeURIComponent(target.pathname.slice(1));
  const user = decodeURIComponent(target.username);
  const port = options.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), 'hnp-pgbouncer-'));
  const server = [`host=${target.hostname}`, `port=${target.port || 5432}`, `dbname=${database}`, `user=${user}`];
  if (target.password) server.push(`password=${decodeURIComponent(target.password)}`);
  // The pool sends no session settings through a transaction pooler (DATABASE_POOLER=transaction):
  // each server connection gets the timeouts the pool would have set (db/pool.ts defaults).
  server.push(`connect_query='SET statement_timeout = ${STATEMENT_TIMEOUT_MS}; SET idle_in_transaction_session_timeout = ${IDLE_IN_TRANSACTION_TIMEOUT_MS}'`);
  // Clients on loopback are trusted here; a deployment authenticates them (docker-compose: scram-sha-256).
  writeFileSync(join(dir, 'users.txt'), `"${user}" ""\n`);
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `${database} = ${server.join(' ')}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${options.poolSize ?? 20}`,
      // After a failed connection to Postgres PgBouncer waits this long before the next attempt
      // (default 15 s): every Postgres blip would last at least that long for every client.
      'server_login_retry = 1',
      `max_client_conn = ${options.maxClientConnections ?? 1000}`,
      `pidfile = ${join(dir, 'pgbouncer.pid')}`,
      '',
    ].join('\n'),
  );
  // PgBouncer refuses to run as root: as root it runs as the postgres OS user, which must read its folder.
  const asRoot = userInfo().uid === 0;
  if (asRoot) {
    const postgres = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const uid = Number(postgres.stdout.trim());
    if (postgres.status !== 0 || !Number.isInteger(uid)) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error('running as root, PgBouncer needs the postgres OS user');
    }
    chmodSync(dir, 0o755);
    chownSync(dir, uid, -1);
  }
  const child = spawnOwned(binary, [...(asRoot ? ['-u', 'postgres'] : []), join(dir, 'pgbouncer.ini')], { detached: options.detached ?? false });
  let said = '';
  child.stdout!.on('data', (chunk: Buffer) => (said = (said + chunk.toString('utf8')).slice(-4_000)));
  child.stderr!.on('data', (chunk: Buffer) => (said = (said + chunk.toString('utf8')).slice(-4_000)));
  const url = `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
  const stop = async () => {
    await stopChild(child, 'SIGINT', 5_000);
    rmSync(dir, { recursive: true, force: true });
  };
  const until = Date.now() + 15_000;
  for (;;) {
    const probe = await createDatabasePool(url, { maxPoolSize: 1, transactionPooler: true }).catch(() => null);
    if (probe) {
      await probe.end();
      return { url, stop };
    }
    if (Date.now() > until || child.exitCode !== null) {
      await stop();
      throw new Error(`PgBouncer did not start:\n${said}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
