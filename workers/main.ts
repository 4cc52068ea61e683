// Production entry point of the worker. On SIGTERM it stops polling, lets in-flight activities
// finish within SHUTDOWN_GRACE_MS, and hands the rest back to Temporal for another worker. Every
// line it writes, Temporal's own included, goes through the logger (platform/temporal-logging.ts).
import { migrate } from '../db/migrate.ts';
import { loadConfig } from '../platform/config.ts';
import { createLogger } from '../platform/logger.ts';
import { flushTemporalLogs } from '../platform/temporal-logging.ts';
import { startWorker } from './compose.ts';
import { onShutdownSignal } from '../platform/signals.ts';
import { startTracingFromEnv } from '../platform/tracing.ts';

const config = loadConfig();
const log = createLogger(config.LOG_LEVEL, 'worker-main');
const { DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: temporalAddress } = config;
if (!databaseUrl || !temporalAddress) {
  log.fatal('DATABASE_URL and TEMPORAL_ADDRESS are required (use `npm start` for a self-contained local stack).');
  process.exit(2);
}
// A failure is a log line like any other (JSON with LOG_FORMAT=json), after the Temporal lines that
// explain it (Core's warnings wait briefly in the runtime's buffer), never a bare stack on stderr.
const fail = async (error: unknown, message: string): Promise<never> => {
  await flushTemporalLogs();
  log.fatal({ err: error }, message);
  process.exit(1);
};
// Traces when the OTEL_* variables ask for them (docs/observability.md).
const tracing = startTracingFromEnv('hosted-notes-worker');
// Migrations hold a session advisory lock: through a session connection when DATABASE_URL is pooled.
const worker = await migrate(config.DATABASE_SESSION_URL ?? databaseUrl, (msg) => log.info(msg))
  .then(() => startWorker(config, databaseUrl, temporalAddress, { tracing }))
  .catch((error: unknown) => fail(error, 'worker start-up failed'));
log.info({ taskQueue: config.TEMPORAL_TASK_QUEUE, metricsUrl: worker.metricsUrl, tracing: tracing !== null }, 'worker polling');
onShutdownSignal(log, async () => {
  await worker.shutdown();
  await tracing?.shutdown();
});
await worker.running.catch((error: unknown) => fail(error, 'worker stopped'));
