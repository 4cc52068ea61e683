// `npm run topology`: the production topology on this machine, without containers (docs/topology.md):
// HAProxy on :3000 (or --port) in front of --apis API processes (default 2), --workers workers
// (default 2), Debian's PgBouncer in transaction mode in front of Postgres, Temporal at
// TEMPORAL_ADDRESS (else a dev server). Postgres: DATABASE_URL, else the local server's (or an
// embedded one's) `notes_topology` database. Prints every address; Ctrl-C stops the balancer, the
// APIs (drained), the workers, the pooler, then what it started.
//   npm run topology -- [--apis 2] [--workers 2] [--port 3000] [--verbose]
//   npm run topology -- --write-compose-config   (writes deploy/haproxy.cfg from the same definition)
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { migrate } from '../db/migrate.ts';
import { createDatabase, databaseExists, withDatabase } from '../platform/local-stack/databases.ts';
import { seedLocalDemo } from '../platform/local-stack/demo-stack.ts';
import { preferredPort } from '../platform/local-stack/ports.ts';
import { findOrStartPostgres } from '../platform/local-stack/postgres-server.ts';
import { resolveTemporalCli } from '../platform/local-stack/temporal-cli.ts';
import { startTemporalDevServer } from '../platform/local-stack/temporal-dev-server.ts';
import { createLogger } from '../platform/logger.ts';
import { projectRoot } from '../platform/project-root.ts';
import { onShutdownSignal } from '../platform/signals.ts';
import { composeHaproxyConfig } from '../platform/topology/compose.ts';
import { startTopology } from '../platform/topology/topology.ts';

const { values: args } = parseArgs({
  options: {
    apis: { type: 'string', default: '2' },
    workers: { type: 'string', default: '2' },
    port: { type: 'string' },
    verbose: { type: 'boolean', default: false },
    'write-compose-config': { type: 'boolean', default: false },
  },
});
if (args['write-compose-config']) {
  const file = join(projectRoot, 'deploy', 'haproxy.cfg');
  writeFileSync(file, composeHaproxyConfig());
  process.stdout.write(`wrote ${file}\n`);
  process.exit(0);
}
const count = (name: 'apis' | 'workers', value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 16) {
    process.stderr.write(`--${name} must be a whole number from 1 to 16 (got ${value})\n`);
    process.exit(2);
  }
  return n;
};
const apis = count('apis', args.apis);
const workers = count('workers', args.workers);

const log = createLogger(process.env['LOG_LEVEL'] === 'silent' ? 'silent' : 'info', 'topology');
const dataDir = resolve(projectRoot, process.env['DATA_DIR'] || '.data', 'topology');
mkdirSync(dataDir, { recursive: true });
// Local only: a generated secrets key kept in the data folder (webhook endpoints, connections).
if (!process.env['SECRETS_ENCRYPTION_KEYS']) {
  const keyFile = join(dataDir, 'secrets.key');
  if (!existsSync(keyFile)) writeFileSync(keyFile, `local:${randomBytes(32).toString('base64')}`, { mode: 0o600 });
  process.env['SECRETS_ENCRYPTION_KEYS'] = readFileSync(keyFile, 'utf8').trim();
}

const stops: Array<[name: string, stop: () => Promise<unknown>]> = [];
const stopAll = async () => {
  for (const [name, stop] of stops.toReversed()) {
    const since = performance.now();
    await stop().catch((error: unknown) => log.warn({ err: error }, `${name} did not stop cleanly`));
    log.info({ ms: Math.round(performance.now() - since) }, `${name} stopped`);
  }
  stops.length = 0;
};
onShutdownSignal(log, stopAll);

try {
  let databaseUrl = process.env['DATABASE_URL'];
  if (!databaseUrl) {
    const server = await findOrStartPostgres({ ...process.env, DATABASE_URL: undefined }, 'topology-postgres');
    if (server.embedded) stops.push(['postgres', server.embedded.stop]);
    if (!(await databaseExists(server.adminUrl, 'notes_topology'))) await createDatabase(server.adminUrl, 'notes_topology');
    databaseUrl = withDatabase(server.adminUrl, 'notes_topology');
  }
  let temporalAddress = process.env['TEMPORAL_ADDRESS'];
  let temporalUi: string | null = process.env['TEMPORAL_UI_URL'] ?? null;
  const startedTemporal = !temporalAddress;
  if (!temporalAddress) {
    const server = await startTemporalDevServer({
      cliPath: resolveTemporalCli(process.env, (msg) => log.info(msg)),
      port: await preferredPort(7233),
      uiPort: await preferredPort(8233),
      dbFilename: join(dataDir, 'temporal.sqlite'),
      detached: true,
    });
    stops.push(['temporal', server.stop]);
    temporalAddress = server.address;
    temporalUi = server.uiUrl;
  }
  // Once here, so the demo can be seeded before the processes start (each also migrates, under the lock).
  await migrate(databaseUrl);
  const { demo, product, reviewer } = await seedLocalDemo(databaseUrl, dataDir);

  const port = args.port !== undefined ? Number(args.port) : await preferredPort(3000);
  log.info({ apis, workers }, 'starting PgBouncer, the workers, the APIs and HAProxy');
  const topology = await startTopology({
    databaseUrl,
    temporalAddress,
    apis,
    workers,
    port,
    detached: true,
    plaintextTemporal: startedTemporal,
    env: {
      PUBLIC_BASE_URL: process.env['PUBLIC_BASE_URL'] ?? `http://127.0.0.1:${port}`,
      LOG_LEVEL: process.env['LOG_LEVEL'] ?? 'info',
      ...(temporalUi ? { TEMPORAL_UI_URL: temporalUi } : {}),
    },
    ...(args.verbose ? { onLine: (name: string, line: string) => process.stdout.write(`${name.padEnd(9)} ${line}\n`) } : {}),
  });
  stops.push(['topology (balancer, APIs, workers, pooler)', topology.stop]);

  const auth = `-H "Authorization: Bearer ${demo.token}"`;
  process.stdout.write(
    [
      '',
      `Production topology is up: ${apis} API process${apis === 1 ? '' : 'es'}, ${workers} worker${workers === 1 ? '' : 's'}`,
      `  Load balancer   ${topology.url}   (HAProxy: round robin over the APIs whose /readyz/process answers, checked every second)`,
      `  HAProxy stats   ${topology.balancer.statsUrl}   (per-API state and requests; drain or disable an API from the page)`,
      ...topology.apis.map((api) => `  ${api.name.padEnd(15)} ${api.url}   metrics ${api.metricsUrl}   pid ${api.child.pid}`),
      ...topology.workers.map((worker) => `  ${worker.name.padEnd(15)} metrics ${worker.metricsUrl}   pid ${worker.child.pid}`),
      `  PgBouncer       ${topology.pooler.url}   (transaction mode: every process's pool)`,
      `  Postgres        ${databaseUrl.replace(/:[^:@/]+@/, ':***@')}   (migrations and the console's LISTEN, directly)`,
      `  Temporal        ${temporalAddress}${temporalUi ? `   UI ${temporalUi}` : ''}`,
      `  Demo token      ${demo.token}`,
      `  Reviewer token  ${reviewer.token}   (sign in at ${topology.url}/console)`,
      `  Product Runtime credential ${product.credential}`,
      '',
      'Try (any API may answer a request; X-Served-By names the one that did):',
      `  curl -s ${auth} "${topology.url}/api/dev/notes?mappingId=${demo.mappingId}"`,
      `  for i in 1 2 3 4; do curl -s -o /dev/null -w "%{http_code} %header{x-served-by}\\n" ${auth} ${topology.url}/api/dev/workspaces; done`,
      `  curl -s "${topology.balancer.statsUrl};csv" | cut -d, -f1,2,18,49 | grep apis      # each API's state and requests served`,
      `  kill -TERM ${topology.apis[0]!.child.pid}   # ${topology.apis[0]!.name} drains (its /readyz/process turns 503, HAProxy takes it out) and exits; requests keep being served`,
      '',
      'Stop: Ctrl-C',
      '',
    ].join('\n'),
  );
} catch (error) {
  log.fatal({ err: error }, 'the topology did not start');
  await stopAll();
  process.exit(1);
}
