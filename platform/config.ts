// Every setting the service reads from the environment, validated once at start-up.
// README.md documents each variable; keep the two in step.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { defaultAllowances } from '../domain/usage.ts';
import type { Allowances } from '../domain/usage.ts';
import type { MediaStorageSettings } from '../domain/media/setup.ts';
import { GOOGLE_ENDPOINTS } from '../domain/connections/provider.ts';
import type { GoogleClientSettings } from '../domain/connections/provider.ts';
import type { IntelligenceSettings } from '../domain/intelligence/setup.ts';

const positiveInt = z.coerce.number().int().positive();
/** An empty value (docker compose's `${VAR:-}`) means unset. */
const unsetIfEmpty = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === '' ? undefined : v), schema.optional());
/**
 * The path of a PEM file, read once here so an unreadable one stops start-up naming its variable
 * (platform/temporal.ts reads it again to connect). Never says what the file holds.
 */
const pemFile = z.string().superRefine((path, ctx) => {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: `cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})` });
    return;
  }
  if (!/-----BEGIN [A-Z0-9 ]+-----/.test(text)) ctx.addIssue({ code: 'custom', message: `${path} is not PEM (no -----BEGIN line)` });
});

export const configSchema = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  PUBLIC_BASE_URL: z.url().optional(),
  /** Browser origins (scheme://host[:port], comma-separated) allowed to call /api/mcp besides PUBLIC_BASE_URL's; api/routes/mcp/origins.ts parses it. */
  MCP_ALLOWED_ORIGINS: z.string().default(''),
  DATABASE_URL: z.string().optional(),
  /** A session (not transaction-pooled) connection for what needs one: LISTEN (the console's live updates) and migrations (their advisory lock). Default: DATABASE_URL. */
  DATABASE_SESSION_URL: z.string().optional(),
  /** `transaction`: DATABASE_URL goes through a transaction pooler such as pgbouncer (db/pool.ts, PoolOptions.transactionPooler). */
  DATABASE_POOLER: z.enum(['none', 'transaction']).default('none'),
  DATABASE_POOL_SIZE: positiveInt.default(20),
  DATABASE_STATEMENT_TIMEOUT_MS: positiveInt.default(15_000),
  TEMPORAL_ADDRESS: z.string().optional(),
  TEMPORAL_NAMESPACE: z.string().default('default'),
  TEMPORAL_TASK_QUEUE: z.string().default('notes-platform'),
  // TLS to TEMPORAL_ADDRESS (docs/operations.md, as Temporal Cloud needs): on when an API key, a
  // client certificate, a CA or a server name is set, else off (platform/temporal.ts).
  TEMPORAL_TLS: unsetIfEmpty(z.enum(['true', 'false'])),
  TEMPORAL_TLS_CA_PATH: unsetIfEmpty(pemFile),
  TEMPORAL_TLS_SERVER_NAME: unsetIfEmpty(z.string()),
  TEMPORAL_TLS_CERT_PATH: unsetIfEmpty(pemFile),
  TEMPORAL_TLS_KEY_PATH: unsetIfEmpty(pemFile),
  TEMPORAL_API_KEY: unsetIfEmpty(z.string().trim().min(1)),
  TEMPORAL_CLI_PATH: z.string().optional(),
  // The Temporal Web UI the reviewer console links proposal workflows to (npm start sets it to the dev server's).
  TEMPORAL_UI_URL: unsetIfEmpty(z.url()),
  DATA_DIR: z.string().default('.data'),
  // Prometheus metrics on a listener of their own (never the API port): unset is off; npm start picks a free port.
  METRICS_PORT: unsetIfEmpty(z.coerce.number().int().min(0).max(65535)),
  METRICS_HOST: z.string().default('127.0.0.1'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // Read by platform/logger.ts itself (default: pretty on a terminal, JSON otherwise); validated here.
  LOG_FORMAT: z.enum(['json', 'pretty']).optional(),
  SHUTDOWN_GRACE_MS: positiveInt.default(10_000),
  // API: how long /readyz answers 503 on SIGTERM, while every request is still served, before the
  // listener closes: a load balancer's health checks take the process out first (docs/topology.md).
  SHUTDOWN_DRAIN_MS: z.coerce.number().int().min(0).max(120_000).default(0),
  SECRETS_ENCRYPTION_KEYS: z.string().optional(),
  WEBHOOK_EGRESS_ALLOWLIST: z.string().default(''),
  WEBHOOK_RETRY_BASE_MS: positiveInt.default(1_000),
  PROPOSAL_EXPIRY_SECONDS: positiveInt.default(7 * 24 * 3600),
  // Metered intelligence (docs/intelligence.md): an OpenAI-compatible provider. Without a base URL,
  // key and text model, intelligence is unavailable (never generated locally). Prices in microdollars.
  INTELLIGENCE_PROVIDER_BASE_URL: unsetIfEmpty(z.url()),
  INTELLIGENCE_PROVIDER_API_KEY: unsetIfEmpty(z.string()),
  INTELLIGENCE_TEXT_MODEL: unsetIfEmpty(z.string()),
  INTELLIGENCE_TEXT_INPUT_MICRODOLLARS_PER_MTOK: z.coerce.number().int().min(0).max(1_000_000_000).default(0),
  INTELLIGENCE_TEXT_OUTPUT_MICRODOLLARS_PER_MTOK: z.coerce.number().int().min(0).max(1_000_000_000).default(0),
  INTELLIGENCE_TEXT_MAX_OUTPUT_TOKENS: z.coerce.number().int().min(16).max(16_384).default(16_384),
  INTELLIGENCE_IMAGE_MODEL: unsetIfEmpty(z.string()),
  INTELLIGENCE_IMAGE_MICRODOLLARS_PER_IMAGE: z.coerce.number().int().min(0).max(100_000_000).default(0),
  INTELLIGENCE_PROVIDER_TIMEOUT_MS: positiveInt.default(120_000),
  INTELLIGENCE_RESERVATION_TTL_MS: positiveInt.default(60_000),
  /** How long a finished generation's events stay readable at …/generations/{id}/events (then 410 generation_expired). */
  INTELLIGENCE_GENERATION_RETENTION_HOURS: positiveInt.default(24),
  // Private media storage (docs/media.md): Postgres needs nothing; s3 needs at least the bucket.
  MEDIA_STORAGE_BACKEND: z.enum(['postgres', 's3']).default('postgres'),
  MEDIA_S3_BUCKET: unsetIfEmpty(z.string().min(3).max(63)),
  MEDIA_S3_REGION: z.string().min(1).default('us-east-1'),
  MEDIA_S3_ENDPOINT: unsetIfEmpty(z.url()),
  MEDIA_S3_FORCE_PATH_STYLE: z.enum(['true', 'false']).default('false'),
  MEDIA_S3_KEY_PREFIX: z.string().max(200).default('media/'),
  MEDIA_S3_ACCESS_KEY_ID: unsetIfEmpty(z.string()),
  MEDIA_S3_SECRET_ACCESS_KEY: unsetIfEmpty(z.string()),
  MEDIA_S3_TIMEOUT_MS: positiveInt.default(30_000),
  // Delegated Google connections (docs/connections.md): both set turn them on; they also need
  // PUBLIC_BASE_URL (the OAuth callback's address) and SECRETS_ENCRYPTION_KEYS (tokens are sealed).
  GOOGLE_OAUTH_CLIENT_ID: unsetIfEmpty(z.string()),
  GOOGLE_OAUTH_CLIENT_SECRET: unsetIfEmpty(z.string()),
  GOOGLE_OAUTH_AUTHORIZE_URL: z.url().default(GOOGLE_ENDPOINTS.authorizeUrl),
  GOOGLE_OAUTH_TOKEN_URL: z.url().default(GOOGLE_ENDPOINTS.tokenUrl),
  GOOGLE_OAUTH_REVOKE_URL: z.url().default(GOOGLE_ENDPOINTS.revokeUrl),
  GOOGLE_DRIVE_ROOT_URL: z.url().default(GOOGLE_ENDPOINTS.driveRootUrl),
  GOOGLE_CLASSROOM_ROOT_URL: z.url().default(GOOGLE_ENDPOINTS.classroomRootUrl),
  GOOGLE_TIMEOUT_MS: positiveInt.default(20_000),
  // Allowances (domain/usage.ts); a monthly value of 0 refuses the plan on that interface.
  REST_REQUESTS_PER_MINUTE: positiveInt.default(defaultAllowances.rest.perMinute),
  REST_MONTHLY_REQUESTS_DEVELOPER_AGENT: z.coerce.number().int().min(0).default(defaultAllowances.rest.perMonth.developer_agent!),
  REST_MONTHLY_REQUESTS_TEAM: z.coerce.number().int().min(0).default(defaultAllowances.rest.perMonth.team!),
  MCP_REQUESTS_PER_MINUTE: positiveInt.default(defaultAllowances.mcp.perMinute),
  MCP_MONTHLY_REQUESTS_PREMIUM: z.coerce.number().int().min(0).default(defaultAllowances.mcp.perMonth.premium!),
  MCP_MONTHLY_REQUESTS_PROFESSIONAL: z.coerce.number().int().min(0).default(defaultAllowances.mcp.perMonth.professional!),
  MCP_MONTHLY_REQUESTS_DEVELOPER_AGENT: z.coerce.number().int().min(0).default(defaultAllowances.mcp.perMonth.developer_agent!),
  MCP_MONTHLY_REQUESTS_TEAM: z.coerce.number().int().min(0).default(defaultAllowances.mcp.perMonth.team!),
}).superRefine((config, ctx) => {
  // Temporal's TLS settings that only make sense together (platform/temporal.ts builds the connection).
  if (config.TEMPORAL_TLS_CERT_PATH && !config.TEMPORAL_TLS_KEY_PATH) {
    ctx.addIssue({ code: 'custom', path: ['TEMPORAL_TLS_KEY_PATH'], message: 'required with TEMPORAL_TLS_CERT_PATH (an mTLS client certificate needs its private key)' });
  }
  if (config.TEMPORAL_TLS_KEY_PATH && !config.TEMPORAL_TLS_CERT_PATH) {
    ctx.addIssue({ code: 'custom', path: ['TEMPORAL_TLS_CERT_PATH'], message: 'required with TEMPORAL_TLS_KEY_PATH (an mTLS private key needs its client certificate)' });
  }
  if (config.TEMPORAL_TLS === 'false') {
    if (config.TEMPORAL_API_KEY) {
      ctx.addIssue({ code: 'custom', path: ['TEMPORAL_API_KEY'], message: 'needs TLS, but TEMPORAL_TLS is false: the key would be sent in clear (unset TEMPORAL_TLS or set it to true)' });
    }
    const tlsOnly = (['TEMPORAL_TLS_CA_PATH', 'TEMPORAL_TLS_SERVER_NAME', 'TEMPORAL_TLS_CERT_PATH', 'TEMPORAL_TLS_KEY_PATH'] as const).filter((name) => config[name]);
    if (tlsOnly.length > 0) {
      ctx.addIssue({ code: 'custom', path: ['TEMPORAL_TLS'], message: `is false, but ${tlsOnly.join(', ')} ${tlsOnly.length === 1 ? 'is a TLS setting' : 'are TLS settings'} (unset TEMPORAL_TLS or set it to true)` });
    }
  }
});

export type Config = z.infer<typeof configSchema>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

export function allowancesFrom(config: Config): Allowances {
  return {
    rest: {
      perMinute: config.REST_REQUESTS_PER_MINUTE,
      perMonth: { developer_agent: config.REST_MONTHLY_REQUESTS_DEVELOPER_AGENT, team: config.REST_MONTHLY_REQUESTS_TEAM },
    },
    mcp: {
      perMinute: config.MCP_REQUESTS_PER_MINUTE,
      perMonth: {
        premium: config.MCP_MONTHLY_REQUESTS_PREMIUM,
        professional: config.MCP_MONTHLY_REQUESTS_PROFESSIONAL,
        developer_agent: config.MCP_MONTHLY_REQUESTS_DEVELOPER_AGENT,
        team: config.MCP_MONTHLY_REQUESTS_TEAM,
      },
    },
  };
}

export function egressFrom(config: Config) {
  return { allowList: config.WEBHOOK_EGRESS_ALLOWLIST.split(',').map((h) => h.trim()).filter(Boolean) };
}

/** The intelligence provider's settings, or null when none is configured (intelligence is then unavailable). */
export function intelligenceFrom(config: Config): IntelligenceSettings | null {
  if (!config.INTELLIGENCE_PROVIDER_BASE_URL || !config.INTELLIGENCE_PROVIDER_API_KEY || !config.INTELLIGENCE_TEXT_MODEL) return null;
  return {
    provider: {
      baseUrl: config.INTELLIGENCE_PROVIDER_BASE_URL,
      apiKey: config.INTELLIGENCE_PROVIDER_API_KEY,
      timeoutMs: config.INTELLIGENCE_PROVIDER_TIMEOUT_MS,
      // An image answered as a URL is fetched under the webhooks' egress rules.
      egress: egressFrom(config),
    },
    text: {
      name: config.INTELLIGENCE_TEXT_MODEL,
      inputMicrodollarsPerMillionTokens: config.INTELLIGENCE_TEXT_INPUT_MICRODOLLARS_PER_MTOK,
      outputMicrodollarsPerMillionTokens: config.INTELLIGENCE_TEXT_OUTPUT_MICRODOLLARS_PER_MTOK,
      maxOutputTokens: config.INTELLIGENCE_TEXT_MAX_OUTPUT_TOKENS,
    },
    image: config.INTELLIGENCE_IMAGE_MODEL ? { name: config.INTELLIGENCE_IMAGE_MODEL, microdollarsPerImage: config.INTELLIGENCE_IMAGE_MICRODOLLARS_PER_IMAGE } : null,
    timing: {
      reservationTtlMs: config.INTELLIGENCE_RESERVATION_TTL_MS,
      // The provider's own deadline plus a minute: only a request nobody reported is recorded this way.
      completionDeadlineMs: config.INTELLIGENCE_PROVIDER_TIMEOUT_MS + 60_000,
      generationRetentionHours: config.INTELLIGENCE_GENERATION_RETENTION_HOURS,
    },
  };
}

/** Where media bytes live: Postgres (the default, nothing to configure) or an S3-compatible bucket. */
export function mediaStorageFrom(config: Config): MediaStorageSettings {
  if (config.MEDIA_STORAGE_BACKEND === 'postgres') return { backend: 'postgres' };
  if (!config.MEDIA_S3_BUCKET) throw new Error('Invalid configuration:\n  MEDIA_S3_BUCKET: required when MEDIA_STORAGE_BACKEND is s3');
  const keys = config.MEDIA_S3_ACCESS_KEY_ID && config.MEDIA_S3_SECRET_ACCESS_KEY;
  return {
    backend: 's3',
    s3: {
      bucket: config.MEDIA_S3_BUCKET,
      region: config.MEDIA_S3_REGION,
      ...(config.MEDIA_S3_ENDPOINT ? { endpoint: config.MEDIA_S3_ENDPOINT } : {}),
      forcePathStyle: config.MEDIA_S3_FORCE_PATH_STYLE === 'true',
      keyPrefix: config.MEDIA_S3_KEY_PREFIX,
      // Without both keys the SDK's default chain (environment, web identity, instance role) applies.
      ...(keys ? { credentials: { accessKeyId: config.MEDIA_S3_ACCESS_KEY_ID!, secretAccessKey: config.MEDIA_S3_SECRET_ACCESS_KEY! } } : {}),
      requestTimeoutMs: config.MEDIA_S3_TIMEOUT_MS,
    },
  };
}

/**
 * The Google OAuth client and endpoints, or null when no client is configured (connections are then
 * unavailable). A configured client without somewhere to seal tokens or a public callback address
 * is a configuration error, said at start-up rather than at the first callback.
 */
export function googleFrom(config: Config): (GoogleClientSettings & { publicBaseUrl: string }) | null {
  if (!config.GOOGLE_OAUTH_CLIENT_ID && !config.GOOGLE_OAUTH_CLIENT_SECRET) return null;
  const missing = [
    !config.GOOGLE_OAUTH_CLIENT_ID && 'GOOGLE_OAUTH_CLIENT_ID',
    !config.GOOGLE_OAUTH_CLIENT_SECRET && 'GOOGLE_OAUTH_CLIENT_SECRET',
    !config.PUBLIC_BASE_URL && 'PUBLIC_BASE_URL (the OAuth callback is its /api/product/v1/connections/provider/oauth/callback)',
    !config.SECRETS_ENCRYPTION_KEYS && 'SECRETS_ENCRYPTION_KEYS (OAuth tokens are stored sealed)',
  ].filter(Boolean);
  if (missing.length > 0) throw new Error(`Invalid configuration:\n  Google connections need ${missing.join(', ')}`);
  return {
    clientId: config.GOOGLE_OAUTH_CLIENT_ID!,
    clientSecret: config.GOOGLE_OAUTH_CLIENT_SECRET!,
    endpoints: {
      authorizeUrl: config.GOOGLE_OAUTH_AUTHORIZE_URL,
      tokenUrl: config.GOOGLE_OAUTH_TOKEN_URL,
      revokeUrl: config.GOOGLE_OAUTH_REVOKE_URL,
      driveRootUrl: config.GOOGLE_DRIVE_ROOT_URL,
      classroomRootUrl: config.GOOGLE_CLASSROOM_ROOT_URL,
    },
    timeoutMs: config.GOOGLE_TIMEOUT_MS,
    publicBaseUrl: config.PUBLIC_BASE_URL!.replace(/\/+$/, ''),
  };
}
