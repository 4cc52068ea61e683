// `npm start`: the whole platform on one machine with no configuration.
// Postgres: DATABASE_URL, else an embedded server under .data/postgres.
// Temporal: TEMPORAL_ADDRESS, else `temporal server start-dev` with its Web UI and .data/temporal.sqlite.
// Then migrations, the demo account, the API and a worker. Ctrl-C stops them in reverse order.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createDatabasePool } from '../db/pool.ts';
import { migrate } from '../db/migrate.ts';
import { loadConfig } from '../platform/config.ts';
import { createDatabase, databaseExists, withDatabase } from '../platform/local-stack/databases.ts';
import { ensureDemo } from '../platform/local-stack/demo.ts';
import { startEmbeddedPostgres } from '../platform/local-stack/embedded-postgres.ts';
import { canConnect, freePort } from '../platform/local-stack/ports.ts';
import { projectRoot, resolveTemporalCli, TemporalCliUnavailable } from '../platform/local-stack/temporal-cli.ts';
import { startTemporalDevServer } from '../platform/local-stack/temporal-dev-server.ts';
import { createLogger } from '../platform/logger.ts';
import { startApi, startWorker } from '../platform/services.ts';
import { onShutdownSignal } from '../platform/signals.ts';
import { seedDemoNotes } from '../domain/notes/demo-notes.ts';

const started = performance.now();
const dataDirForKey = resolve(projectRoot, process.env['DATA_DIR'] ?? '.data');
mkdirSync(dataDirForKey, { recursive: true });
// Local only: a generated secrets key kept under .data/, so webhook endpoints work out of the box.
if (!process.env['SECRETS_ENCRYPTION_KEYS']) {
  const keyFile = join(dataDirForKey, 'secrets.key');
  if (!existsSync(keyFile)) writeFileSync(keyFile, `local:${randomBytes(32).toString('base64')}`, { mode: 0o600 });
  process.env['SECRETS_ENCRYPTION_KEYS'] = readFileSync(keyFile, 'utf8').trim();
}
const config = loadConfig();
const log = createLogger(config.LOG_LEVEL, 'start');
const dataDir = resolve(projectRoot, config.DATA_DIR);
mkdirSync(dataDir, { recursive: true });

const stops: Array<[string, () => Promise<void>]> = [];
const stopAll = async () => {
  for (const [name, stop] of stops.reverse()) {
    try {
      await stop();
      log.info(`${name} stopped`);
    } catch (error) {
      log.warn({ err: error }, `${name} did not stop cleanly`);
    }
  }
};
onShutdownSignal(log, stopAll);

async function preferredPort(port: number): Promise<number> {
  return (await canConnect('127.0.0.1', port, 300)) ? freePort() : port;
}

try {
  let databaseUrl = config.DATABASE_URL;
  if (!databaseUrl) {
    log.info('starting embedded Postgres (.data/postgres)');
    const pg = await startEmbeddedPostgres({ dataDir: join(dataDir, 'postgres'), port: await preferredPort(54329) });
    stops.push(['postgres', pg.stop]);
    if (!(await databaseExists(pg.adminUrl, 'notes'))) await createDatabase(pg.adminUrl, 'notes');
    databaseUrl = withDatabase(pg.adminUrl, 'notes');
  }

  let temporalAddress = config.TEMPORAL_ADDRESS;
  let temporalUi = process.env['TEMPORAL_UI_URL'] ?? null;
  if (!temporalAddress) {
    const cliPath = resolveTemporalCli(process.env, (msg) => log.info(msg));
    log.info('starting Temporal dev server (.data/temporal.sqlite)');
    const server = await startTemporalDevServer({
      cliPath,
      port: await preferredPort(7233),
      uiPort: await preferredPort(8233),
      dbFilename: join(dataDir, 'temporal.sqlite'),
      detached: true,
    });
    stops.push(['temporal', server.stop]);
    temporalAddress = server.address;
    temporalUi = server.uiUrl;
  }

  const applied = await migrate(databaseUrl);
  if (applied.length) log.info({ applied }, 'migrations applied');

  const seedPool = await createDatabasePool(databaseUrl, { maxPoolSize: 2 });
  const demo = await ensureDemo(seedPool, join(dataDir, 'demo.json'), seedDemoNotes).finally(() => seedPool.end());

  const worker = await startWorker(config, databaseUrl, temporalAddress);
  stops.push(['worker', worker.shutdown]);
  const api = await startApi(config, databaseUrl, temporalAddress);
  stops.push(['api', api.close]);

  const stateFile = join(dataDir, 'local-stack.json');
  writeFileSync(stateFile, JSON.stringify({ databaseUrl, temporalAddress, apiUrl: api.url }, null, 2), { mode: 0o600 });
  stops.push(['state file', async () => rmSync(stateFile, { force: true })]);

  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const curl = `curl -s -H "Authorization: Bearer ${demo.token}" "${api.url}/api/dev/notes?mappingId=${demo.mappingId}"`;
  process.stdout.write(
    [
      '',
      `Hosted Notes Platform is ready (${seconds} s)`,
      `  API          ${api.url}`,
      `  API docs     ${api.url}/docs`,
      `  Temporal UI  ${temporalUi ?? '(external Temporal: see your deployment)'}`,
      `  Demo token   ${demo.token}${demo.reused ? '   (same as last start)' : ''}`,
      `  mappingId    ${demo.mappingId}`,
      '',
      'Try:',
      `  ${curl}`,
      '',
      'Operations CLI: npm run ops -- --help      Stop: Ctrl-C',
      '',
    ].join('\n'),
  );
} catch (error) {
  if (error instanceof TemporalCliUnavailable) log.fatal(error.message);
  else log.fatal({ err: error }, 'start-up failed');
  await stopAll();
  process.exit(1);
}
