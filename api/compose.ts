// The API's composition root: builds the app from configuration with its own pool and Temporal
// connection, listens, and closes them in order. Used by api/main.ts (production) and
// scripts/start.ts (the local stack).
import type { FastifyInstance } from 'fastify';
import { createDatabasePool } from '../db/pool.ts';
import { createSecretBox } from '../domain/secret-box.ts';
import { createIntelligence } from '../domain/intelligence/setup.ts';
import { createBlobStore } from '../domain/media/setup.ts';
import { createGoogleOAuthProvider } from '../domain/connections/google-oauth.ts';
import { allowancesFrom, egressFrom, googleFrom, intelligenceFrom, mediaStorageFrom } from '../platform/config.ts';
import type { Config } from '../platform/config.ts';
import { lazyTemporalConnection, temporalConnectionOptions } from '../platform/temporal.ts';
import { buildApp } from './app.ts';
import { createMetricsRegistry, serveMetrics } from '../platform/metrics.ts';
import type { MetricsListener } from '../platform/metrics.ts';
import { registerDomainMetrics } from './metrics/domain.ts';
import { observeQueries, registerPoolMetrics } from '../db/observability.ts';
import type { Tracing } from '../platform/tracing.ts';
import { allowedOriginsFromEnvironment } from './routes/mcp/origins.ts';

/** `metricsUrl`: where Prometheus scrapes this process (null: METRICS_PORT unset). */
export type RunningApi = { app: FastifyInstance; url: string; metricsUrl: string | null; close: () => Promise<void> };

/**
 * `parseResults: false` is for the benchmark that prices row parsing only (db/pool.ts). `tracing`:
 * the process's tracer (platform/tracing.ts), started by the entry point (it is process-wide).
 */
export async function startApi(
  config: Config,
  databaseUrl: string,
  temporalAddress: string,
  options: { parseResults?: boolean; tracing?: Tracing | null } = {},
): Promise<RunningApi> {
  // Metrics (METRICS_PORT): HTTP, pool, queries, the process, and the domain's figures.
  const registry = config.METRICS_PORT !== undefined ? createMetricsRegistry({ process: 'api' }) : null;
  const tracing = options.tracing ?? null;
  const db = await createDatabasePool(databaseUrl, {
    maxPoolSize: config.DATABASE_POOL_SIZE,
    statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
    transactionPooler: config.DATABASE_POOLER === 'transaction',
    ...(options.parseResults === false ? { parseResults: false } : {}),
    ...(registry || tracing ? { interceptors: [observeQueries({ registry, traces: tracing !== null })] } : {}),
  });
  const connection = lazyTemporalConnection(temporalConnectionOptions(config, temporalAddress));
  const intelligence = intelligenceFrom(config);
  const google = googleFrom(config);
  const lifecycle = { draining: false };
  // One shutdown however many signals or callers ask for it.
  let closing: Promise<void> | undefined;
  const app = await buildApp({
    db,
    temporal: { connection, namespace: config.TEMPORAL_NAMESPACE, taskQueue: config.TEMPORAL_TASK_QUEUE },
    logLevel: config.LOG_LEVEL,
    allowances: allowancesFrom(config),
    secretBox: createSecretBox(config.SECRETS_ENCRYPTION_KEYS),
    egress: egressFrom(config),
    webhookRetryBaseMs: config.WEBHOOK_RETRY_BASE_MS,
    proposalExpirySeconds: config.PROPOSAL_EXPIRY_SECONDS,
    intelligence: intelligence ? createIntelligence(intelligence) : null,
    mediaStore: createBlobStore(mediaStorageFrom(config), db),
    connections: google ? { provider: createGoogleOAuthProvider(google), settings: google, publicBaseUrl: google.publicBaseUrl } : null,
    ...(config.PUBLIC_BASE_URL ? { publicBaseUrl: config.PUBLIC_BASE_URL } : {}),
    // A bad entry stops start-up naming itself (origins.ts), rather than refusing browsers later.
    mcpAllowedOrigins: allowedOriginsFromEnvironment({ PUBLIC_BASE_URL: config.PUBLIC_BASE_URL, MCP_ALLOWED_ORIGINS: config.MCP_ALLOWED_ORIGINS }),
    temporalUiUrl: config.TEMPORAL_UI_URL ?? null,
    consoleLive: { databaseUrl: config.DATABASE_SESSION_URL ?? databaseUrl },
    // Every API process relays the workflow starts still pending (any number may run at once).
    workflowRelay: {},
    substringIndexer: {},
    // Expired OAuth codes and tokens, dead grants and unused clients, swept in batches (domain/oauth).
    oauthSweeper: {},
    metrics: registry,
    tracing: tracing !== null,
    lifecycle,
  });
  await app.listen({ host: config.HOST, port: config.PORT });
  // Metrics on their own listener, never the API port (platform/metrics.ts).
  let metrics: MetricsListener | null = null;
  if (registry && config.METRICS_PORT !== undefined) {
    registerPoolMetrics(registry, db);
    registerDomainMetrics(registry, db);
    metrics = await serveMetrics(registry, config.METRICS_HOST, config.METRICS_PORT);
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const url = `http://${config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST}:${port}`;
  return {
    app,
    url,
    metricsUrl: metrics?.url ?? null,
    // First SHUTDOWN_DRAIN_MS of /readyz answering 503 while everything is still served (a load
    // balancer's checks take the process out of rotation); then Fastify stops accepting, lets
    // in-flight requests finish (answering 503 to new ones on kept connections), and we release the
    // pool and the Temporal connection.
    close: () => (closing ??= (async () => {
      if (config.SHUTDOWN_DRAIN_MS > 0) {
        lifecycle.draining = true;
        app.log.info({ drainMs: config.SHUTDOWN_DRAIN_MS }, 'draining: /readyz answers 503 until the listener closes');
        await new Promise((resolve) => setTimeout(resolve, config.SHUTDOWN_DRAIN_MS));
      }
      await metrics?.close();
      await app.close();
      await db.end();
      await connection.close();
    })()),
  };
}
