// Production entry point of the worker. On SIGTERM it stops polling, lets in-flight activities
// finish within SHUTDOWN_GRACE_MS, and hands the rest back to Temporal for another worker.
import { migrate } from '../db/migrate.ts';
import { loadConfig } from '../platform/config.ts';
import { createLogger } from '../platform/logger.ts';
import { startWorker } from './compose.ts';
import { onShutdownSignal } from '../platform/signals.ts';

const config = loadConfig();
const log = createLogger(config.LOG_LEVEL, 'worker-main');
if (!config.DATABASE_URL || !config.TEMPORAL_ADDRESS) {
  log.fatal('DATABASE_URL and TEMPORAL_ADDRESS are required (use `npm start` for a self-contained local stack).');
  process.exit(2);
}
await migrate(config.DATABASE_URL, (msg) => log.info(msg));
const worker = await startWorker(config, config.DATABASE_URL, config.TEMPORAL_ADDRESS);
log.info({ taskQueue: config.TEMPORAL_TASK_QUEUE }, 'worker polling');
onShutdownSignal(log, () => worker.shutdown());
await worker.running;
