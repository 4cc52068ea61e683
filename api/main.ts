// Production entry point of the API (see Dockerfile / docker-compose.yml). Migrations run first,
// under an advisory lock, so several replicas may start at once.
import { migrate } from '../db/migrate.ts';
import { loadConfig } from '../platform/config.ts';
import { createLogger } from '../platform/logger.ts';
import { startApi } from './compose.ts';
import { onShutdownSignal } from '../platform/signals.ts';
import { installTemporalClientLogging } from '../platform/temporal-logging.ts';
import { startTracingFromEnv } from '../platform/tracing.ts';

const config = loadConfig();
const log = createLogger(config.LOG_LEVEL, 'api-main');
// The Temporal client's gRPC transport logs through the same logger (JSON when asked), never to stderr as text.
installTemporalClientLogging(log);
if (!config.DATABASE_URL || !config.TEMPORAL_ADDRESS) {
  log.fatal('DATABASE_URL and TEMPORAL_ADDRESS are required (use `npm start` for a self-contained local stack).');
  process.exit(2);
}
// Migrations hold a session advisory lock: through a session connection when DATABASE_URL is pooled.
await migrate(config.DATABASE_SESSION_URL ?? config.DATABASE_URL, (msg) => log.info(msg));
// Traces when the OTEL_* variables ask for them (docs/observability.md); spans still buffered are
// sent after the last request is answered.
const tracing = startTracingFromEnv('hosted-notes-api');
const api = await startApi(config, config.DATABASE_URL, config.TEMPORAL_ADDRESS, { tracing });
log.info({ url: api.url, metricsUrl: api.metricsUrl, tracing: tracing !== null }, 'api listening');
onShutdownSignal(log, async () => {
  await api.close();
  await tracing?.shutdown();
});
