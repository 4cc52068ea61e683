// Builds the Fastify application: HTTP conventions at the root, then one encapsulated plugin per
// interface, each with its own prefix, schemas and auth hook. No module-level state: everything an
// interface needs arrives through `deps`, so tests build as many isolated apps as they like.
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { LogController } from 'fastify';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { Client } from '@temporalio/client';
import type { Connection } from '@temporalio/client';
import type { DatabasePool } from 'slonik';
import { pingDatabase } from '../db/pool.ts';
import { AllowanceLeases } from '../domain/allowance-lease.ts';
import { AdmissionCache } from '../domain/principals/admission-cache.ts';
import type { TokenAdmission } from '../domain/principals/admission-cache.ts';
import type { ChainAdmission } from '../domain/product-runtime/chain.ts';
import { defaultAllowances } from '../domain/usage.ts';
import type { Allowances } from '../domain/usage.ts';
import { interfaceEntitlements } from '../domain/identity/plans.ts';
import type { Entitlements } from '../domain/identity/plans.ts';
import type { EgressPolicy } from '../domain/automation/network.ts';
import type { SecretBox } from '../domain/secret-box.ts';
import type { Intelligence } from '../domain/intelligence/setup.ts';
import type { BlobStore } from '../domain/media/blob-store.ts';
import type { ConnectionsSetup } from './routes/product/kit.ts';
import { createPostgresBlobStore } from '../domain/media/postgres-blob-store.ts';
import { loggerOptions } from '../platform/logger.ts';
import { clientErrorHandler, frameworkErrors, MAX_PARAM_LENGTH, registerEdgeRules } from './edge.ts';
import { openapiRoutes, swaggerOptions } from './openapi.ts';
import { registerProblemHandling } from './problems.ts';
import { healthRoutes } from './routes/health.ts';
import { devApi } from './routes/dev/index.ts';
import { oauthServer } from './routes/oauth/index.ts';
import { startOAuthSweeper } from './routes/oauth/sweeper.ts';
import type { OAuthSweeperOptions } from './routes/oauth/sweeper.ts';
import { mcpGateway } from './routes/mcp/index.ts';
import { automationGateway } from './routes/automation/index.ts';
import { productRuntime } from './routes/product/index.ts';
import { GroupCommit } from '../domain/notes/group-commit.ts';
import { RUNTIME_MOUNT, runtimeMountHeaders } from './routes/product/kit.ts';
import { reviewerConsole } from './routes/console/index.ts';
import { mcpDocumentation } from './routes/mcp/openapi-docs.ts';
import { productDocumentation } from './routes/product/openapi-docs.ts';
import { defaultLiveOptions, LiveStreams } from './routes/console/live.ts';
import { NotificationListener } from '../db/notification-listener.ts';
import { ProposalWaits } from '../domain/automation/proposal-waits.ts';
import { startSubstringIndexer } from './substring-indexer.ts';
import type { SubstringIndexerOptions } from './substring-indexer.ts';
import { proposalChangesChannel } from '../domain/console/live.ts';
import type { WorkflowStarter } from './routes/shared/workflow-starts.ts';
import { startWorkflowRelay } from './workflow-relay.ts';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import type { Registry } from 'prom-client';
import { registerAdmissionCacheMetrics, registerHttpMetrics, registerLiveStreamMetrics } from './metrics/http.ts';
import { registerTracing } from './observability.ts';
import type { RelayOptions } from './workflow-relay.ts';

export type AppDeps = {
  db: DatabasePool;
  temporal: { connection: Connection; namespace: string; taskQueue: string };
  logLevel?: string;
  /** Use an existing pino logger (tests pass a silent one). */
  logger?: FastifyBaseLogger;
  publicBaseUrl?: string;
  /** Browser origins allowed to call /api/mcp (MCP_ALLOWED_ORIGINS and PUBLIC_BASE_URL's); none by default. */
  mcpAllowedOrigins?: readonly string[];
  /** REST and MCP allowances; defaults from domain/usage.ts. */
  allowances?: Allowances;
  /** Which plans include each interface; defaults to the spec's table (domain/identity/plans.ts). */
  entitlements?: Entitlements;
  /** How long an unreviewed action proposal waits before it expires (default 7 days). */
  proposalExpirySeconds?: number;
  /** Seals webhook secrets (SECRETS_ENCRYPTION_KEYS); webhook endpoints are unavailable without it. */
  secretBox?: SecretBox | null;
  /** Private hosts/addresses webhooks may reach (WEBHOOK_EGRESS_ALLOWLIST); none by default. */
  egress?: EgressPolicy;
  webhookRetryBaseMs?: number;
  /**
   * Run the relay of pending workflow starts in this process (api/workflow-relay.ts): on in every
   * API process of a deployment (any number may run); off by default so a test app starts nothing
   * on its own.
   */
  workflowRelay?: RelayOptions | null;
  /** Index the substring queue in this process (decision 106); absent or null: searches read the queue. */
  substringIndexer?: SubstringIndexerOptions | null;
  /** Sweep the OAuth server's expired codes, tokens, dead grants and unused clients in this process (api/routes/oauth/sweeper.ts); absent or null: none. */
  oauthSweeper?: OAuthSweeperOptions | null;
  /** The Product Runtime's model provider, prices and metering timing (docs/intelligence.md); none: intelligence is unavailable. */
  intelligence?: Intelligence | null;
  /** Where private media bytes live (MEDIA_STORAGE_BACKEND); default: Postgres (domain/media/postgres-blob-store.ts). */
  mediaStore?: BlobStore;
  /** Delegated Google connections (GOOGLE_OAUTH_*, docs/connections.md); none: they answer unavailable. Tokens are sealed with `secretBox`. */
  connections?: ConnectionsSetup | null;
  /** The Temporal Web UI (TEMPORAL_UI_URL) the reviewer console links proposal workflows to; none: it shows their ids. */
  temporalUiUrl?: string | null;
  /** Record HTTP metrics into this registry (platform/metrics.ts); none: not recorded. */
  metrics?: Registry | null;
  /** Trace requests and Temporal calls with the process's tracer provider (platform/tracing.ts). */
  tracing?: boolean;
  /**
   * The reviewer console's live stream (decision 98): the session connection it LISTENs on (default:
   * the pool's URL; DATABASE_SESSION_URL behind a transaction pooler), its heartbeat and how many
   * streams this process holds at most. null: no stream, the pages poll.
   */
  consoleLive?: { databaseUrl?: string; heartbeatMs?: number; maxStreams?: number } | null;
  /** Set by the process's shutdown before it closes the app (SHUTDOWN_DRAIN_MS): /readyz answers 503 meanwhile. */
  lifecycle?: { draining: boolean };
};

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** Where the MCP gateway is mounted; its part of the OpenAPI document is described there. */
const MCP_MOUNT = '/api/mcp';

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: loggerOptions(deps.logLevel ?? 'info', 'api') }),
    // A caller-supplied X-Request-Id is kept when it is sane, so traces join across services.
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID_PATTERN.test(incoming) ? incoming : randomUUID();
    },
    // When tracing, api/observability.ts writes Fastify's two request lines itself, once the
    // request's span exists, so they carry its trace id like every other line of the request.
    logController: new LogController({ requestIdLogLabel: 'requestId', disableRequestLogging: deps.tracing === true }),
    forceCloseConnections: 'idle',
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: frameworkErrors(runtimeMountHeaders),
    clientErrorHandler,
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  // Graceful shutdown: close() stops accepting and closes idle keep-alive connections at once; a
  // response still in flight then goes out with Connection: close, so its socket ends too and close()
  // completes as soon as the last in-flight request is answered.
  let closing = false;
  // A connection that has not sent a byte (a browser's preconnect, a client that gave up before its
  // request) is not idle to Node, which would hold close() until its headersTimeout (60 s): with no
  // request there is nothing to finish, so it is closed at once.
  const connections = new Set<Socket>();
  app.server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  app.addHook('preClose', async () => {
    closing = true;
    for (const socket of connections) if (socket.bytesRead === 0) socket.destroy();
  });
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close');
  });
  registerEdgeRules(app);
  registerProblemHandling(app);
  if (deps.tracing) await registerTracing(app);
  if (deps.metrics) registerHttpMetrics(app, deps.metrics);

  // The OpenAPI document: frame, per-route transform and completion pass in api/openapi.ts, which
  // knows no interface: what an interface adds beyond its routes' schemas is handed in here.
  await app.register(swagger, swaggerOptions({ publicBaseUrl: deps.publicBaseUrl, contributions: [mcpDocumentation(MCP_MOUNT), productDocumentation] }));
  await app.register(swaggerUi, { routePrefix: '/docs' });
  await app.register(openapiRoutes);

  await app.register(healthRoutes, {
    draining: () => deps.lifecycle?.draining === true,
    checks: {
      postgres: () => pingDatabase(deps.db),
      temporal: async () => {
        await deps.temporal.connection.withDeadline(Date.now() + 2_000, () => deps.temporal.connection.workflowService.getSystemInfo({}));
      },
    },
  });
  // Admission (domain/principals/admission.ts) charges through this app's allowance leases, which
  // carry the plans table it judges by; unused reservations go back on close.
  const leases = new AllowanceLeases(deps.db, deps.allowances ?? defaultAllowances, deps.entitlements ?? interfaceEntitlements);
  app.addHook('onClose', async () => {
    await leases.releaseAll().catch((error: unknown) => app.log.warn({ err: error }, 'returning allowance leases failed'));
  });
  // One Temporal client (and the one task queue) for every interface that starts or signals workflows.
  // When tracing, its interceptor carries the request's trace into workflow starts, signals and updates.
  const temporal = new Client({
    connection: deps.temporal.connection,
    namespace: deps.temporal.namespace,
    ...(deps.tracing ? { interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } } : {}),
  });
  // The starter makes every workflow start the interfaces record (durable: api/routes/shared/workflow-starts.ts).
  const starter: WorkflowStarter = { db: deps.db, temporal, taskQueue: deps.temporal.taskQueue, webhookRetryBaseMs: deps.webhookRetryBaseMs ?? 1_000 };
  const workflows = { temporal, taskQueue: deps.temporal.taskQueue, starter };
  if (deps.oauthSweeper) {
    const sweeper = startOAuthSweeper(deps.db, app.log, deps.oauthSweeper);
    app.addHook('onClose', () => sweeper.stop());
  }
  if (deps.substringIndexer) {
    const indexer = startSubstringIndexer(deps.db, app.log, deps.substringIndexer);
    app.addHook('onClose', () => indexer.stop());
  }
  if (deps.workflowRelay) {
    const relay = startWorkflowRelay(starter, app.log, deps.workflowRelay);
    app.addHook('onClose', () => relay.stop());
  }
  const proposalExpirySeconds = deps.proposalExpirySeconds ?? 7 * 24 * 3600;
  // Single-note writes of REST and MCP share a vault's transactions while they arrive together (decision 93).
  const notes = new GroupCommit(deps.db);
  // One LISTEN connection per process for every open console stream and every proposal wait, made
  // when the first one opens.
  const proposalChanges =
    deps.consoleLive === null ? null : new NotificationListener(() => deps.consoleLive?.databaseUrl ?? deps.db.configuration.connectionUri, proposalChangesChannel, app.log);
  if (proposalChanges) app.addHook('onClose', () => proposalChanges.stop());
  // Blocking reads of a proposal (GET /api/dev/automation/proposals/:id?changedFrom=…&wait=…).
  // The process's bound on held requests (console streams, proposal waits: each counted on its own).
  const maxHeld = deps.consoleLive?.maxStreams ?? defaultLiveOptions.maxStreams;
  const proposalWaits = new ProposalWaits(proposalChanges, maxHeld);
  app.addHook('preClose', async () => proposalWaits.endAll());
  // Kept admissions (decisions 111 and 112): tokens' for the hot read, shared by REST and MCP's
  // get_note_content; service credentials' chains for every Product Runtime request.
  const admissions = new AdmissionCache<TokenAdmission>();
  const runtimeAdmissions = new AdmissionCache<ChainAdmission>();
  if (deps.metrics) registerAdmissionCacheMetrics(deps.metrics, { personal_access_token: admissions, service_principal: runtimeAdmissions });
  await app.register(devApi, { prefix: '/api/dev', db: deps.db, leases, admissions, notes });
  await app.register(mcpGateway, { prefix: MCP_MOUNT, db: deps.db, leases, admissions, notes, allowedOrigins: deps.mcpAllowedOrigins ?? [], publicBaseUrl: deps.publicBaseUrl });
  await app.register(oauthServer, { db: deps.db, publicBaseUrl: deps.publicBaseUrl });
  await app.register(automationGateway, {
    prefix: '/api/dev/automation',
    db: deps.db,
    leases,
    ...workflows,
    proposalExpirySeconds,
    proposalWaits,
    secretBox: deps.secretBox ?? null,
    egress: deps.egress ?? { allowList: [] },
    webhookRetryBaseMs: deps.webhookRetryBaseMs ?? 1_000,
  });
  await app.register(productRuntime, {
    prefix: RUNTIME_MOUNT,
    db: deps.db,
    admissions: runtimeAdmissions,
    ...workflows,
    proposalExpirySeconds,
    intelligence: deps.intelligence ?? null,
    mediaStore: deps.mediaStore ?? createPostgresBlobStore(deps.db),
    connections: deps.connections && deps.secretBox ? { ...deps.connections, secretBox: deps.secretBox } : null,
    // The generation log's LISTEN needs a session connection (not PgBouncer in transaction mode).
    listenDatabaseUrl: deps.consoleLive?.databaseUrl,
  });
  const liveStreams = new LiveStreams();
  if (deps.metrics) registerLiveStreamMetrics(deps.metrics, { streams: () => liveStreams.size, listening: () => proposalChanges?.healthy ?? true });
  await app.register(reviewerConsole, {
    prefix: '/console',
    db: deps.db,
    leases,
    ...workflows,
    publicBaseUrl: deps.publicBaseUrl,
    temporalUi: deps.temporalUiUrl ? { baseUrl: deps.temporalUiUrl.replace(/\/+$/, ''), namespace: deps.temporal.namespace } : null,
    live: {
      listener: proposalChanges,
      heartbeatMs: deps.consoleLive?.heartbeatMs ?? defaultLiveOptions.heartbeatMs,
      maxStreams: maxHeld,
    },
    streams: liveStreams,
  });

  return app;
}
