// The worker's composition root: its own pool and Temporal connection, the platform worker
// (workers/worker.ts) and the idempotency sweep, released in order once the worker has drained.
// Used by workers/main.ts (production) and scripts/start.ts (the local stack).
import { NativeConnection } from '@temporalio/worker';
import type { Worker } from '@temporalio/worker';
import { createDatabasePool } from '../db/pool.ts';
import type { DatabasePool } from '../db/pool.ts';
import { purgeExpiredIdempotencyRecords } from '../domain/idempotency.ts';
import { sweepUnfinishedMedia } from '../domain/media/library.ts';
import { createBlobStore } from '../domain/media/setup.ts';
import { createSecretBox } from '../domain/secret-box.ts';
import { createGoogleOAuthProvider } from '../domain/connections/google-oauth.ts';
import { egressFrom, googleFrom, mediaStorageFrom } from '../platform/config.ts';
import type { Config } from '../platform/config.ts';
import { createLogger } from '../platform/logger.ts';
import { installTemporalLogging } from '../platform/temporal-logging.ts';
import { temporalConnectionOptions } from '../platform/temporal.ts';
import { createPlatformWorker } from './worker.ts';
import { observeQueries, registerPoolMetrics } from '../db/observability.ts';
import { createMetricsRegistry, serveMetrics } from '../platform/metrics.ts';
import { freePort } from '../platform/local-stack/ports.ts';
import type { MetricsListener } from '../platform/metrics.ts';
import type { Tracing } from '../platform/tracing.ts';

/** `metricsUrl`: where Prometheus scrapes this worker (null: METRICS_PORT unset). */
export type RunningWorker = { worker: Worker; db: DatabasePool; metricsUrl: string | null; running: Promise<void>; shutdown: () => Promise<void> };

export async function startWorker(config: Config, databaseUrl: string, temporalAddress: string, options: { tracing?: Tracing | null } = {}): Promise<RunningWorker> {
  // Metrics (METRICS_PORT): the process's and its pool's, and the Temporal Core SDK's own worker and
  // client metrics from its Prometheus exporter, which listens on a loopback port of its own and is
  // served on the same page (platform/metrics.ts), so a worker is one scrape target.
  const registry = config.METRICS_PORT !== undefined ? createMetricsRegistry({ process: 'worker' }) : null;
  const corePort = registry ? await freePort() : null;
  installTemporalLogging(createLogger(config.LOG_LEVEL, 'temporal'), undefined, corePort ? { prometheusBindAddress: `127.0.0.1:${corePort}` } : {});
  const google = googleFrom(config);
  const tracing = options.tracing ?? null;
  const db = await createDatabasePool(databaseUrl, {
    maxPoolSize: 10,
    statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
    transactionPooler: config.DATABASE_POOLER === 'transaction',
    ...(registry || tracing ? { interceptors: [observeQueries({ registry, traces: tracing !== null })] } : {}),
  });
  let metrics: MetricsListener | null = null;
  if (registry && config.METRICS_PORT !== undefined) {
    registerPoolMetrics(registry, db);
    metrics = await serveMetrics(registry, config.METRICS_HOST, config.METRICS_PORT, [`http://127.0.0.1:${corePort}/metrics`]);
  }
  const connection = await NativeConnection.connect(temporalConnectionOptions(config, temporalAddress));
  const worker = await createPlatformWorker({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    deps: {
      db,
      secretBox: createSecretBox(config.SECRETS_ENCRYPTION_KEYS),
      egress: egressFrom(config),
      // The OAuth attempt workflows' code exchange (docs/connections.md); null: callbacks end as connections_not_configured.
      oauthProvider: google ? createGoogleOAuthProvider(google) : null,
    },
    shutdownGraceTime: config.SHUTDOWN_GRACE_MS,
    tracing,
  });
  // Idempotency records are replayable for 24 h; the worker sweeps expired ones every 10 minutes,
  // and finishes media uploads and deletions a dead API process left half done (docs/media.md).
  const log = createLogger(config.LOG_LEVEL, 'worker');
  const mediaStore = createBlobStore(mediaStorageFrom(config), db);
  const sweep = setInterval(() => {
    purgeExpiredIdempotencyRecords(db).then(
      (n) => n > 0 && log.info({ purged: n }, 'expired idempotency records purged'),
      (error: unknown) => log.warn({ err: error }, 'idempotency sweep failed'),
    );
    sweepUnfinishedMedia(db, mediaStore).then(
      (swept) => (swept.abandoned > 0 || swept.deleted > 0) && log.info(swept, 'unfinished media uploads and deletions finished'),
      (error: unknown) => log.warn({ errName: error instanceof Error ? error.name : 'unknown' }, 'media sweep failed'),
    );
  }, 10 * 60_000);
  sweep.unref();
  // run() resolves once shutdown() has drained the worker; resources are released after that.
  const running = worker.run().finally(async () => {
    clearInterval(sweep);
    await metrics?.close();
    await connection.close();
    await db.end();
  });
  return {
    worker,
    db,
    metricsUrl: metrics?.url ?? null,
    running,
    shutdown: async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    },
  };
}
