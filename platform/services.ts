// Starting and stopping the two long-running services (API, worker) with their resources, shared by
// the production entry points (api/main.ts, workers/main.ts) and the local stack (scripts/start.ts).
import type { FastifyInstance } from 'fastify';
import type { Worker } from '@temporalio/worker';
import { buildApp } from '../api/app.ts';
import { createDatabasePool } from '../db/pool.ts';
import { purgeExpiredIdempotencyRecords } from '../domain/idempotency.ts';
import type { DatabasePool } from '../db/pool.ts';
import { createPlatformWorker, NativeConnection } from '../workers/worker.ts';
import { allowancesFrom, egressFrom } from './config.ts';
import { createSecretBox } from '../domain/secret-box.ts';
import type { Config } from './config.ts';
import { createLogger } from './logger.ts';
import { lazyTemporalConnection } from './temporal.ts';
import { installTemporalLogging } from './temporal-logging.ts';

export type RunningApi = { app: FastifyInstance; url: string; close: () => Promise<void> };

export async function startApi(config: Config, databaseUrl: string, temporalAddress: string): Promise<RunningApi> {
  const db = await createDatabasePool(databaseUrl, { maxPoolSize: config.DATABASE_POOL_SIZE, statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS });
  const connection = lazyTemporalConnection(temporalAddress);
  const app = await buildApp({
    db,
    temporal: { connection, namespace: config.TEMPORAL_NAMESPACE, taskQueue: config.TEMPORAL_TASK_QUEUE },
    logLevel: config.LOG_LEVEL,
    allowances: allowancesFrom(config),
    secretBox: createSecretBox(config.SECRETS_ENCRYPTION_KEYS),
    egress: egressFrom(config),
    webhookRetryBaseMs: config.WEBHOOK_RETRY_BASE_MS,
    proposalExpirySeconds: config.PROPOSAL_EXPIRY_SECONDS,
    ...(config.PUBLIC_BASE_URL ? { publicBaseUrl: config.PUBLIC_BASE_URL } : {}),
  });
  await app.listen({ host: config.HOST, port: config.PORT });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const url = `http://${config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST}:${port}`;
  return {
    app,
    url,
    // Fastify stops accepting, lets in-flight requests finish (answering 503 to new ones on kept
    // connections), then we release the pool and the Temporal connection.
    close: async () => {
      await app.close();
      await db.end();
      await connection.close();
    },
  };
}

export type RunningWorker = { worker: Worker; db: DatabasePool; running: Promise<void>; shutdown: () => Promise<void> };

export async function startWorker(config: Config, databaseUrl: string, temporalAddress: string): Promise<RunningWorker> {
  installTemporalLogging(createLogger(config.LOG_LEVEL, 'temporal'));
  const db = await createDatabasePool(databaseUrl, { maxPoolSize: 10, statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS });
  const connection = await NativeConnection.connect({ address: temporalAddress });
  const worker = await createPlatformWorker({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    deps: { db, secretBox: createSecretBox(config.SECRETS_ENCRYPTION_KEYS), egress: egressFrom(config) },
    shutdownGraceTime: config.SHUTDOWN_GRACE_MS,
  });
  // Idempotency records are replayable for 24 h; the worker sweeps expired ones every 10 minutes.
  const log = createLogger(config.LOG_LEVEL, 'worker');
  const sweep = setInterval(() => {
    purgeExpiredIdempotencyRecords(db).then(
      (n) => n > 0 && log.info({ purged: n }, 'expired idempotency records purged'),
      (error: unknown) => log.warn({ err: error }, 'idempotency sweep failed'),
    );
  }, 10 * 60_000);
  sweep.unref();
  // run() resolves once shutdown() has drained the worker; resources are released after that.
  const running = worker.run().finally(async () => {
    clearInterval(sweep);
    await connection.close();
    await db.end();
  });
  return {
    worker,
    db,
    running,
    shutdown: async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    },
  };
}
