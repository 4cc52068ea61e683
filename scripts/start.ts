// `npm start`: the whole platform on one machine with no configuration.
// Postgres: DATABASE_URL, else an embedded server under $DATA_DIR/postgres.
// Temporal: TEMPORAL_ADDRESS, else `temporal server start-dev` with its Web UI and $DATA_DIR/temporal.sqlite.
// Then migrations, the demo account, the API and a worker.
//
// Ctrl-C stops the API, then the worker, then Temporal, then Postgres, one log line each. The two
// servers run in their own process groups, so the terminal's SIGINT reaches only this process
// (and npm), and they are stopped last, after the API and the worker no longer need them.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { migrate } from '../db/migrate.ts';
import { loadConfig } from '../platform/config.ts';
import { createDatabase, databaseExists, withDatabase } from '../platform/local-stack/databases.ts';
import { seedLocalDemo } from '../platform/local-stack/demo-stack.ts';
import { EmbeddedPostgresUnavailable, startEmbeddedPostgres } from '../platform/local-stack/embedded-postgres.ts';
import { preferredPort } from '../platform/local-stack/ports.ts';
import { resolveTemporalCli, TemporalCliUnavailable } from '../platform/local-stack/temporal-cli.ts';
import { projectRoot } from '../platform/project-root.ts';
import { startTemporalDevServer } from '../platform/local-stack/temporal-dev-server.ts';
import { temporalTlsSettings, withoutTemporalTls } from '../platform/temporal.ts';
import { createLogger } from '../platform/logger.ts';
import { onShutdownSignal } from '../platform/signals.ts';
import { startApi } from '../api/compose.ts';
import { startWorker } from '../workers/compose.ts';
import { startTracingFromEnv } from '../platform/tracing.ts';

const started = performance.now();
const dataDir = resolve(projectRoot, process.env['DATA_DIR'] || '.data');
mkdirSync(dataDir, { recursive: true });
// Local only: a generated secrets key kept in the data folder, so webhook endpoints work out of the box.
if (!process.env['SECRETS_ENCRYPTION_KEYS']) {
  const keyFile = join(dataDir, 'secrets.key');
  if (!existsSync(keyFile)) writeFileSync(keyFile, `local:${randomBytes(32).toString('base64')}`, { mode: 0o600 });
  process.env['SECRETS_ENCRYPTION_KEYS'] = readFileSync(keyFile, 'utf8').trim();
}
let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig();
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(2);
}
const log = createLogger(config.LOG_LEVEL, 'start');
const stateFile = join(dataDir, 'local-stack.json');

// Services in start order (postgres, temporal, worker, api); stopped in reverse.
const services: Array<[name: string, stop: () => Promise<void>]> = [];
const stopAll = async () => {
  // First, so `npm run ops` no longer points at a stack that is going away.
  rmSync(stateFile, { force: true });
  for (const [name, stop] of services.toReversed()) {
    const since = performance.now();
    try {
      await stop();
      log.info({ ms: Math.round(performance.now() - since) }, `${name} stopped`);
    } catch (error) {
      log.warn({ err: error }, `${name} did not stop cleanly`);
    }
  }
  services.length = 0;
};
onShutdownSignal(log, stopAll);


try {
  let databaseUrl = config.DATABASE_URL;
  if (!databaseUrl) {
    const pgDir = join(dataDir, 'postgres');
    log.info(`starting embedded Postgres (${pgDir})`);
    const pg = await startEmbeddedPostgres({
      dataDir: pgDir,
      port: await preferredPort(54329),
      log: (line) => (line.startsWith('the postgres OS user') ? log.info(line) : log.debug(line)),
    });
    services.push(['postgres', pg.stop]);
    if (!(await databaseExists(pg.adminUrl, 'notes'))) await createDatabase(pg.adminUrl, 'notes');
    databaseUrl = withDatabase(pg.adminUrl, 'notes');
  }

  let temporalAddress = config.TEMPORAL_ADDRESS;
  let temporalUi = config.TEMPORAL_UI_URL ?? null;
  let temporalMetrics: string | null = null;
  if (!temporalAddress) {
    const cliPath = resolveTemporalCli(process.env, (msg) => log.info(msg));
    const dbFilename = join(dataDir, 'temporal.sqlite');
    log.info(`starting Temporal dev server (${dbFilename})`);
    const server = await startTemporalDevServer({
      cliPath,
      port: await preferredPort(7233),
      uiPort: await preferredPort(8233),
      dbFilename,
      detached: true,
      log: (line) => log.debug(line),
    });
    services.push(['temporal', server.stop]);
    temporalAddress = server.address;
    temporalUi = server.uiUrl;
    temporalMetrics = server.metricsUrl;
    // The dev server speaks plaintext: the TLS and API-key settings are for TEMPORAL_ADDRESS.
    const ignored = temporalTlsSettings.filter((name) => config[name] !== undefined);
    if (ignored.length > 0) log.warn({ ignored }, 'Temporal TLS settings ignored: they apply to TEMPORAL_ADDRESS, and the local dev server has no TLS');
    config = withoutTemporalTls(config);
  }

  const applied = await migrate(databaseUrl);
  if (applied.length) log.info({ applied }, 'migrations applied');

  const { demo, product, reviewer } = await seedLocalDemo(databaseUrl, dataDir);

  // Traces when the OTEL_* variables ask for them (docs/observability.md): one tracer for the process.
  const tracing = startTracingFromEnv('hosted-notes');
  if (tracing) services.push(['tracing', tracing.shutdown]);
  const worker = await startWorker({ ...config, METRICS_PORT: config.METRICS_PORT ? config.METRICS_PORT + 1 : 0 }, databaseUrl, temporalAddress, { tracing });
  services.push(['worker', worker.shutdown]);
  // The console links workflows into the Temporal UI: the dev server's when we started one.
  // Metrics on a listener of their own: METRICS_PORT, or a free port (0) when unset.
  // The worker's are on the next port when METRICS_PORT is set, else on a free one too.
  // :3000 unless PORT says otherwise or something else holds it (then a free port, printed below), as for Postgres and Temporal.
  const port = process.env['PORT'] ? config.PORT : await preferredPort(config.PORT);
  const api = await startApi({ ...config, PORT: port, TEMPORAL_UI_URL: temporalUi ?? undefined, METRICS_PORT: config.METRICS_PORT ?? 0 }, databaseUrl, temporalAddress, { tracing });
  services.push(['api', api.close]);

  writeFileSync(stateFile, JSON.stringify({ databaseUrl, temporalAddress, apiUrl: api.url }, null, 2), { mode: 0o600 });

  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const auth = `-H "Authorization: Bearer ${demo.token}"`;
  const runtime = `-H "Authorization: Bearer ${product.credential}" -H "X-Service-Runtime-Version: 1"`;
  process.stdout.write(
    [
      '',
      `Hosted Notes Platform is ready (${seconds} s)`,
      `  API          ${api.url}`,
      `  API docs     ${api.url}/docs`,
      `  MCP          ${api.url}/api/mcp   (OAuth 2.1 or the demo token; docs/mcp.md, "Connect from Claude, ChatGPT, Cursor, VS Code")`,
      `  Reviewer console ${api.url}/console   (sign in with the reviewer token below; propose with the curl line under "Try")`,
      `  Temporal UI  ${temporalUi ?? '(external Temporal: see your deployment)'}`,
      `  Metrics      API ${api.metricsUrl ?? '(off)'}   worker ${worker.metricsUrl ?? '(off)'}${temporalMetrics ? `   Temporal ${temporalMetrics}` : ''}   (Prometheus text format; docs/observability.md)`,
      `  Traces       ${tracing ? `on (OpenTelemetry, ${process.env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'] ?? process.env['OTEL_EXPORTER_OTLP_ENDPOINT'] ?? process.env['OTEL_TRACES_EXPORTER']})` : 'off (set OTEL_EXPORTER_OTLP_ENDPOINT to send them to a collector)'}`,
      `  Data         ${dataDir}`,
      `  Demo token   ${demo.token}${demo.reused ? '   (same as last start)' : ''}`,
      `  Reviewer token ${reviewer.token}   (Demo Reviewer: the reviewer role in the demo workspace)`,
      `  workspaceId  ${demo.workspaceId}`,
      `  mappingId    ${demo.mappingId}`,
      `  Product Runtime credential ${product.credential}   (installation of a demo product, write grant on the demo vault ${demo.vaultId})`,
      `  Intelligence ${
        config.INTELLIGENCE_PROVIDER_BASE_URL && config.INTELLIGENCE_PROVIDER_API_KEY && config.INTELLIGENCE_TEXT_MODEL
          ? `${config.INTELLIGENCE_TEXT_MODEL} at ${config.INTELLIGENCE_PROVIDER_BASE_URL} (metered against the demo organization's US$5 monthly budget)`
          : 'not configured: generate answers the unavailable envelope (set INTELLIGENCE_PROVIDER_BASE_URL, _API_KEY and INTELLIGENCE_TEXT_MODEL; docs/intelligence.md)'
      }`,
      `  Google connections ${
        config.GOOGLE_OAUTH_CLIENT_ID
          ? `client ${config.GOOGLE_OAUTH_CLIENT_ID}, callback ${config.PUBLIC_BASE_URL ?? api.url}/api/product/v1/connections/provider/oauth/callback`
          : 'not configured: connections answer the unavailable envelope (set GOOGLE_OAUTH_CLIENT_ID, _SECRET, PUBLIC_BASE_URL, SECRETS_ENCRYPTION_KEYS; docs/connections.md)'
      }`,
      '',
      'Try:',
      `  curl -s ${auth} "${api.url}/api/dev/notes?mappingId=${demo.mappingId}"`,
      `  curl -s ${auth} ${api.url}/api/dev/workspaces`,
      `  curl -s ${auth} -H "Idempotency-Key: demo-proposal-$(date +%s)" -H "Content-Type: application/json" \\`,
      `       -d '{"workspaceId":"${demo.workspaceId}","bridge":"generic-webhook","summary":"Add a note to the Inbox","action":{"kind":"note.write","mappingId":"${demo.mappingId}","path":"Inbox/From the console demo.md","content":"# Hello\\n\\nApproved in the reviewer console.\\n"}}' \\`,
      `       ${api.url}/api/dev/automation/proposals      # then open the reviewer console`,
      `  curl -s ${auth} "${api.url}/api/dev/automation/proposals?workspaceId=${demo.workspaceId}"`,
      `  curl -s ${runtime} ${api.url}/api/product/v1/capabilities`,
      `  curl -s ${runtime} ${api.url}/api/product/v1/vaults/${demo.vaultId}/notes`,
      `  curl -s ${runtime} -H "Idempotency-Key: demo-$(date +%s)" -H "Content-Type: application/json" -H "Accept: application/x-ndjson" \\`,
      `       -d '{"intent":{"context":"plan","task":"A five-minute warm-up on equivalent fractions"}}' ${api.url}/api/product/v1/intelligence/education/generate`,
      `  curl -s ${runtime} ${api.url}/api/product/v1/intelligence/budget`,
      `  curl -s ${runtime} -H "Idempotency-Key: demo-audio-$(date +%s)" -H "X-Media-Reference: demo/take-1" -H "X-Media-Duration-Seconds: 3" \\`,
      `       -H "Content-Type: audio/ogg" --data-binary @${join(projectRoot, 'test', 'fixtures', 'media', 'tone-3s.ogg')} ${api.url}/api/product/v1/intelligence/education/media/audio`,
      '',
      'Operations CLI: npm run ops -- --help      Stop: Ctrl-C',
      '',
    ].join('\n'),
  );
} catch (error) {
  // Causes with a known fix get their one sentence; anything else its stack.
  if (error instanceof TemporalCliUnavailable || error instanceof EmbeddedPostgresUnavailable) log.fatal(error.message);
  else log.fatal({ err: error }, 'start-up failed');
  await stopAll();
  process.exit(1);
}
