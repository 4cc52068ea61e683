// A server process for the benchmark, so the load generator (bench/run.ts) does not share its
// event loop. `app` is the real platform API; `baseline` is a bare Fastify route doing the same
// single-row SELECT through a plain pg pool, with no auth, no allowance and no validation;
// `app-unparsed` is the real API with the pool's result parser switched off, to price row parsing.
// `app` honours METRICS_PORT (its metrics URL is printed on a second line, `metrics <url>`) and the
// OTEL_* variables, as api/main.ts does.
import Fastify from 'fastify';
import pg from 'pg';
import { loadConfig } from '../platform/config.ts';
import { startApi } from '../api/compose.ts';
import { startTracingFromEnv } from '../platform/tracing.ts';

const mode = process.argv[2];
const databaseUrl = process.env['DATABASE_URL'];
if (!databaseUrl) throw new Error('DATABASE_URL is required');

if (mode === 'app' || mode === 'app-unparsed') {
  const config = loadConfig({ ...process.env, PORT: '0', LOG_LEVEL: 'warn' });
  // Traces as api/main.ts starts them: only when the OTEL_* variables ask (bench/observability.ts).
  const tracing = startTracingFromEnv('hosted-notes-api');
  const api = await startApi(config, databaseUrl, process.env['TEMPORAL_ADDRESS'] ?? '127.0.0.1:7233', { parseResults: mode === 'app', tracing });
  process.stdout.write(`listening ${api.url}\n`);
  // With METRICS_PORT set, where the process serves its metrics (a second line).
  if (api.metricsUrl) process.stdout.write(`metrics ${api.metricsUrl}\n`);
  // Spans still buffered are sent before the process exits.
  process.on('SIGTERM', () => void api.close().then(() => tracing?.shutdown()).then(() => process.exit(0)));
} else if (mode === 'baseline') {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 20 });
  const app = Fastify({ logger: false });
  app.get<{ Params: { vaultId: string; category: string; filename: string } }>('/baseline/:vaultId/:category/:filename', async (request) => {
    const { rows } = await pool.query('SELECT path, title, content, revision, size_bytes, updated_at FROM notes WHERE vault_id = $1 AND path = $2', [
      request.params.vaultId,
      `${request.params.category}/${request.params.filename}`,
    ]);
    return rows[0];
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  process.stdout.write(`listening ${url}\n`);
  process.on('SIGTERM', () => void app.close().then(() => pool.end()).then(() => process.exit(0)));
} else {
  throw new Error('usage: node bench/serve.ts app|app-unparsed|baseline');
}
