// The OpenAPI 3.1 description of every interface, and the two routes that serve it.
//
// Routes say what they are: operationId, summary, description, the zod schemas they validate
// with, and `problems` — the error codes they answer with beyond the ones every operation of their
// kind can answer. This module completes the document in one place, after @fastify/swagger and
// fastify-type-provider-zod have turned the routes into paths:
// - request headers (Idempotency-Key, If-Match, If-None-Match, X-Service-Mapping, MCP's) as
//   parameters: the routes parse them themselves (api/routes/dev/http.ts) with their own codes;
// - response headers (X-Request-Id, RateLimit, RateLimit-Policy, ETag, Location, …);
// - every 4xx/5xx as application/problem+json referencing the Problem schema, described by its
//   codes, with one example per code; the codes every operation shares are added here
//   (automaticProblems), so a route lists only its own;
// - success descriptions and realistic examples (api/openapi-examples.ts);
// - what an interface adds beyond its routes' schemas (DocumentContribution: the MCP endpoint's
//   JSON-RPC request, responses and headers, examples kept beside an interface), handed in by the
//   composition root (api/app.ts): this module imports no interface (eslint.config.js);
// - component schemas nothing refers to are dropped.
// documentationGaps() names any operation without an operationId or an entry below; the export
// script (.ci/run) and test/openapi-document.test.ts fail on any, so no route is published
// undocumented.
import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import type { FastifySchema } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { RUNTIME_MOUNT } from '@hosted-notes/runtime-sdk';
import { errorCatalog } from '../domain/errors.ts';
import type { ErrorCode } from '../domain/errors.ts';
import { operationExamples, parameterExamples, planRevision, problemExample } from './openapi-examples.ts';
import type { ExampleSet, OperationExamples } from './openapi-examples.ts';

declare module 'fastify' {
  interface FastifySchema {
    /**
     * Problem codes this operation answers with, beyond those every operation of its kind can
     * (authentication, allowance, body parsing, validation: see automaticProblems in api/openapi.ts).
     */
    problems?: readonly ErrorCode[];
    /** What the schemas do not say (success descriptions, request headers), beside the route; else api/openapi.ts's table. */
    docs?: OperationDoc;
    /** Realistic request and response examples, beside the route; else the tables of api/openapi-examples.ts. */
    examples?: OperationExamples;
  }
}

const AUTOMATION_PREFIX = '/api/dev/automation';
const RUNTIME_PREFIX = RUNTIME_MOUNT;

// ---- headers ---------------------------------------------------------------------------------

const revisionPattern = '^"?sha256:[0-9a-f]{64}"?$';

/** Request headers, published as components/parameters. */
const requestHeaders = {
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      'Required to apply (dryRun false); previews ignore it. 1–255 visible ASCII characters, scoped to the account, the route and the mapping. ' +
      'The same key with the same payload within 24 h replays the stored answer (Idempotent-Replayed: true); with another payload it is 422 idempotency_key_reused; ' +
      'while the first request runs it is 409 idempotency_in_flight (Retry-After: 1).',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]+$' },
    example: 'plan-v2-2026-03-02',
  },
  IdempotencyKeyRequired: {
    name: 'Idempotency-Key',
    in: 'header',
    required: true,
    description:
      '1–255 visible ASCII characters, scoped to the account, the route and the workspace. The same key with the same body within 24 h replays the first answer ' +
      '(Idempotent-Replayed: true); with another body it is 422 idempotency_key_reused.',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]+$' },
    example: 'capture-4bd51795-proposal',
  },
  IdempotencyKeyOptional: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      'Recommended: makes a retried ingestion safe. Scoped to the account and the workspace; the same key with the same event replays it (200, Idempotent-Replayed: true) ' +
      'and creates no runs and sends no webhooks; with another event (or occurredAt) it is 422 idempotency_key_reused.',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]+$' },
    example: 'capture-0302-0912-7f3a',
  },
  IfMatchWrite: {
    name: 'If-Match',
    in: 'header',
    required: false,
    description:
      'Replace only if the note still has this revision (the ETag of a read, quoted or bare; the same token as expectedHash, and they must agree), else 412 precondition_failed. ' +
      '`*` matches any current note: the write must replace an existing note, else 412.',
    schema: { anyOf: [{ type: 'string', pattern: revisionPattern }, { type: 'string', enum: ['*'] }] },
    example: `"${planRevision}"`,
  },
  IfMatchDelete: {
    name: 'If-Match',
    in: 'header',
    required: false,
    description:
      'Required to apply (dryRun false): the current revision (quoted or bare), else 428 revision_required; a stale one is 412 precondition_failed. ' +
      '`*` deletes whatever is current. A path with no note is 404 note_not_found either way.',
    schema: { anyOf: [{ type: 'string', pattern: revisionPattern }, { type: 'string', enum: ['*'] }] },
    example: `"${planRevision}"`,
  },
  IfNoneMatchWrite: {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    description: 'Only `*`: create-only; 412 precondition_failed when a note exists at the path.',
    schema: { type: 'string', enum: ['*'] },
    example: '*',
  },
  IfNoneMatchRead: {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    description: 'ETags of earlier reads (comma-separated, W/ accepted) or `*`: 304 Not Modified with no body when one matches the current revision.',
    schema: { type: 'string' },
    example: `"${planRevision}"`,
  },
  XServiceMapping: {
    name: 'X-Service-Mapping',
    in: 'header',
    required: false,
    description: 'The mapping (UUID), instead of mappingId in the body or query; when both are sent they must agree (400 mapping_mismatch).',
    schema: { type: 'string', format: 'uuid' },
    example: parameterExamples['mappingId'],
  },
  // The Product Runtime's key, by the operation table's rule (api/routes/product/operation-route.ts
  // runtimeKeyHeader): required on every request, or only to apply.
  RuntimeIdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    required: true,
    description:
      'Required: a request without it is 400 idempotency_key_required. 1–255 visible ASCII characters, scoped to the installation, the operation and its target. ' +
      'The same key and body within 24 h replay the first answer; another body is 422 idempotency_key_reused; while the first request runs it is 409 idempotency_in_flight.',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]+$' },
    example: 'lesson-studio-generate-7f3a',
  },
  RuntimeIdempotencyKeyToApply: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      'Required to apply (mode apply: without it 400 idempotency_key_required); previews ignore it. 1–255 visible ASCII characters, scoped to ' +
      'the installation, the operation and its target. The same key and body within 24 h replay the first answer; another body is 422 idempotency_key_reused.',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]+$' },
    example: 'lesson-studio-publish-7f3a',
  },
  XServiceRuntimeVersion: {
    name: 'X-Service-Runtime-Version',
    in: 'header',
    required: false,
    description:
      'The Product Runtime contract version the caller speaks: `1`. Missing means 1. Anything but a version number is 400 runtime_version_invalid, ' +
      'a version this service does not speak is 400 runtime_version_unsupported (both list supportedVersions). The response shape never changes with it.',
    schema: { type: 'string', pattern: '^[1-9][0-9]{0,8}$' },
    example: '1',
  },
  MediaReference: {
    name: 'X-Media-Reference',
    in: 'header',
    required: true,
    description: "The product's opaque reference for this recording, 1–200 visible ASCII characters (inner spaces allowed); kept and answered as sent.",
    schema: { type: 'string', minLength: 1, maxLength: 200 },
    example: 'lesson-42/reading-check/attempt-3',
  },
  MediaDurationSeconds: {
    name: 'X-Media-Duration-Seconds',
    in: 'header',
    required: true,
    description:
      'The declared duration in seconds, more than 0 and at most 120, with at most 3 decimals. Bounded, not an attestation: where the container states a ' +
      'duration it is recorded beside this one, and a gross contradiction (more than 2 s and more than 25 % apart) is 422 media_duration_mismatch.',
    schema: { type: 'string', pattern: '^[0-9]{1,6}(\\.[0-9]{1,3})?$' },
    example: '42.5',
  },
  MediaRange: {
    name: 'Range',
    in: 'header',
    required: false,
    description: 'One byte range (bytes=0-1023, bytes=1024-, bytes=-4096): 206 with Content-Range. Several ranges or a malformed value: the whole media (200).',
    schema: { type: 'string' },
    example: 'bytes=0-65535',
  },
  MediaIfRange: {
    name: 'If-Range',
    in: 'header',
    required: false,
    description: 'The ETag the client holds: the Range applies only when it is still current, else the whole media is sent.',
    schema: { type: 'string' },
    example: '"9f2c6b1e4d7a8c3b5e0f1a2d4c6b8e0a1c3e5f7a9b1d3f5e7a9c1b3d5f7e9a1c"',
  },
  MediaIfNoneMatch: {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    description: 'ETags of earlier reads (comma-separated, W/ accepted) or `*`: 304 Not Modified with no body when one matches.',
    schema: { type: 'string' },
    example: '"9f2c6b1e4d7a8c3b5e0f1a2d4c6b8e0a1c3e5f7a9b1d3f5e7a9c1b3d5f7e9a1c"',
  },
  MediaIfMatch: {
    name: 'If-Match',
    in: 'header',
    required: false,
    description: 'Read only if the media still has this ETag (strong comparison) or `*`, else 412 precondition_failed.',
    schema: { type: 'string' },
    example: '"9f2c6b1e4d7a8c3b5e0f1a2d4c6b8e0a1c3e5f7a9b1d3f5e7a9c1b3d5f7e9a1c"',
  },
} as const satisfies Record<string, RequestHeaderParameter>;

/** A request header as components/parameters publishes it. */
export type RequestHeaderParameter = { name: string; in: 'header'; required: boolean; description: string; schema: Record<string, unknown>; example: unknown };
/** A response header as components/headers publishes it, with the HTTP name it is listed under. */
export type ResponseHeaderComponent = { name: string; description: string; schema: Record<string, unknown>; example: unknown };

/** The request headers every interface may name; a contribution adds its own. */
export type RequestHeader = keyof typeof requestHeaders;

/** Response headers, published as components/headers. */
const responseHeaders = {
  XRequestId: {
    description: 'The request id: a sane incoming X-Request-Id is kept, else a UUID. The same value is requestId in problem bodies and in every log line of the request.',
    schema: { type: 'string' },
    example: '144122f1-ff55-4af8-ab81-9d7c58af3dfb',
  },
  RateLimit: {
    description:
      "What remains of each allowance boundary (r) and the seconds until it resets (t), per the IETF RateLimit header fields draft. On every counted answer and on 429; " +
      'REST and the automation gateway share the REST allowance, MCP has its own; the Product Runtime publishes its organization\'s month ("organization-month").',
    schema: { type: 'string' },
    example: '"minute";r=598;t=42, "month";r=99871;t=1520040',
  },
  RateLimitPolicy: {
    description: "The two allowance boundaries of the caller's plan: per minute (q requests, w=60 s) and per calendar month, UTC.",
    schema: { type: 'string' },
    example: '"minute";q=600;w=60, "month";q=100000',
  },
  RetryAfter: {
    description: 'Seconds to wait before retrying.',
    schema: { type: 'integer', minimum: 1 },
    example: 42,
  },
  ETag: {
    description: 'The strong ETag: the revision, quoted ("sha256:<hex>" of the exact UTF-8 bytes).',
    schema: { type: 'string' },
    example: `"${planRevision}"`,
  },
  IdempotentReplayed: {
    description: 'Present (true) when this is the stored answer of an earlier request with the same Idempotency-Key and payload.',
    schema: { type: 'string', enum: ['true'] },
    example: 'true',
  },
  Location: {
    description: 'The URL of the created resource (a path on this server).',
    schema: { type: 'string', format: 'uri-reference' },
    example: '/api/dev/automation/proposals/c638cb44-3837-4419-b8d9-0b3a123a7a05',
  },
  NoteLocation: {
    description: 'The note on the single-note routes (GET /api/dev/notes/{category}/{filename}); sent when the path has exactly two segments.',
    schema: { type: 'string', format: 'uri-reference' },
    example: `/api/dev/notes/Projects/Plan.md?mappingId=${String(parameterExamples['mappingId'])}`,
  },
  WWWAuthenticate: {
    description: 'The Bearer challenge; error="invalid_token" when a token was sent but is not valid.',
    schema: { type: 'string' },
    example: 'Bearer realm="hnp", error="invalid_token"',
  },
  Vary: {
    description: 'The representation depends on Accept (JSON or text/markdown).',
    schema: { type: 'string', enum: ['Accept'] },
    example: 'Accept',
  },
  ContentDisposition: {
    description: 'An attachment named <id>.v<version>.json.',
    schema: { type: 'string' },
    example: 'attachment; filename="weekly-review.v1.json"',
  },
  MediaETag: {
    description: 'The strong ETag of stored media: its SHA-256 in hex, quoted (it identifies the bytes exactly).',
    schema: { type: 'string' },
    example: '"9f2c6b1e4d7a8c3b5e0f1a2d4c6b8e0a1c3e5f7a9b1d3f5e7a9c1b3d5f7e9a1c"',
  },
  AcceptRanges: {
    description: 'Byte ranges are served (audio players seek with them).',
    schema: { type: 'string', enum: ['bytes'] },
    example: 'bytes',
  },
  ContentRange: {
    description: 'The range sent and the whole size (206), or `bytes */<size>` on 416.',
    schema: { type: 'string' },
    example: 'bytes 0-65535/482117',
  },
  MediaLocation: {
    description: 'The stored media on readAudio (a path on this server, authorized on every read; never a storage URL).',
    schema: { type: 'string', format: 'uri-reference' },
    example: '/api/product/v1/intelligence/education/media/5d0c3a1e-8f2b-4c6d-9e1a-3b5c7d9f1e2a',
  },
  XServiceRuntimeVersion: {
    description: 'The Product Runtime version that answered; on every runtime response, refusals included.',
    schema: { type: 'string', enum: ['1'] },
    example: '1',
  },
} as const;

/** The response headers every interface may name; a contribution adds its own. */
export type ResponseHeader = keyof typeof responseHeaders;

// ---- operations ------------------------------------------------------------------------------

type ResponseDoc<R extends string = never> = {
  description: string;
  headers?: readonly (ResponseHeader | R)[];
  /** A body that is not JSON (media bytes): its content map, replacing what the route schema gave. */
  content?: Record<string, unknown>;
};

/** `H` and `R`: request and response headers a contribution declares, which it may name beside the shared ones. */
export type OperationDoc<H extends string = never, R extends string = never> = {
  /** Request headers, in the order they are listed. */
  headers?: readonly (RequestHeader | H)[];
  /** Response headers on every answer of the operation, refusals included (MCP's protocol version). */
  everyResponseHeaders?: readonly (ResponseHeader | R)[];
  /** Every success (or 304) status the operation answers with. */
  responses: Record<string, ResponseDoc<R>>;
  /** Answered in JSON-RPC (MCP): its error responses are listed in `responses` too, not as problems. */
  jsonRpc?: true;
  /** A request body that is not JSON (raw media bytes): the requestBody to publish. */
  requestBody?: { required: boolean; description: string; content: Record<string, Record<string, unknown>> };
};

const applied = ['IdempotencyKey', 'XServiceMapping'] as const;

/** What the route schemas do not say, per operationId. Every published operation has an entry. */
const operations: Record<string, OperationDoc> = {
  // operations and documentation
  checkLiveness: { responses: { 200: { description: 'The process serves HTTP.' } } },
  checkReadiness: { responses: { 200: { description: 'Postgres and Temporal answered within 2 s.' } } },
  checkProcessReadiness: { responses: { 200: { description: 'This process takes traffic (it is not shutting down).' } } },
  readOpenApi: { responses: { 200: { description: 'This document.' } } },
  readAutomationOpenApi: { responses: { 200: { description: 'The automation gateway paths of this document, with the components they use.' } } },
  // developer REST
  readCurrentAccount: { responses: { 200: { description: 'The calling account.' } } },
  listWorkspaces: { responses: { 200: { description: "A page of the caller's workspaces." } } },
  listProductInstallations: { responses: { 200: { description: "The workspace's product installations, their grants and open binding requests." } } },
  grantVaultToInstallation: { responses: { 200: { description: 'The live grant, unchanged.' }, 201: { description: 'The new grant.' } } },
  revokeVaultGrant: { responses: { 200: { description: 'The revoked grant; the vault and its notes are untouched.' } } },
  declineVaultBinding: { responses: { 200: { description: 'The declined request.' } } },
  listNotes: { responses: { 200: { description: 'A page of the inventory.' } } },
  readNote: {
    headers: ['XServiceMapping', 'IfNoneMatchRead'],
    responses: {
      200: { description: 'The note: JSON, or the raw Markdown when Accept prefers text/markdown.', headers: ['ETag', 'Vary'] },
      304: { description: 'Not modified: If-None-Match matched the current revision. No body.', headers: ['ETag', 'Vary'] },
    },
  },
  writeNote: {
    headers: [...applied, 'IfMatchWrite', 'IfNoneMatchWrite'],
    responses: {
      200: { description: 'A preview (dryRun true), or an applied replace or no-op. ETag on applies.', headers: ['ETag', 'IdempotentReplayed'] },
      201: { description: 'An applied create.', headers: ['ETag', 'NoteLocation', 'IdempotentReplayed'] },
    },
  },
  deleteNote: {
    headers: [...applied, 'IfMatchDelete'],
    responses: { 200: { description: 'A preview (dryRun true), or the applied delete with its trashId.', headers: ['IdempotentReplayed'] } },
  },
  applyTransaction: {
    headers: applied,
    responses: { 200: { description: 'A preview of every action, or the applied transaction (one transactionId).', headers: ['IdempotentReplayed'] } },
  },
  listTrash: { responses: { 200: { description: 'A page of trash items.' } } },
  restoreNote: {
    headers: applied,
    responses: { 200: { description: 'A preview, or the applied restore. ETag (the restored revision) on applies.', headers: ['ETag', 'IdempotentReplayed'] } },
  },
  listEvents: { responses: { 200: { description: 'A page of provenance events, oldest first; nextCursor is always set.' } } },
  // automation gateway
  readAutomationCatalog: { responses: { 200: { description: 'The catalog, version 1.' } } },
  readAdapter: { responses: { 200: { description: 'The adapter.' } } },
  listTemplates: { responses: { 200: { description: 'Template summaries.' } } },
  readTemplate: { responses: { 200: { description: 'The template.' } } },
  downloadTemplate: { responses: { 200: { description: 'The template as a downloadable artifact.', headers: ['ContentDisposition'] } } },
  ingestEvent: {
    headers: ['IdempotencyKeyOptional'],
    responses: {
      201: { description: 'The event, normalised, and the runs it created.', headers: ['Location'] },
      200: { description: 'A replay: the first event under this Idempotency-Key; no runs created, no webhooks sent.', headers: ['IdempotentReplayed'] },
    },
  },
  readEvent: { responses: { 200: { description: 'The event.' } } },
  createTrigger: { responses: { 201: { description: 'The trigger.', headers: ['Location'] } } },
  listTriggers: { responses: { 200: { description: "The workspace's triggers." } } },
  readTrigger: { responses: { 200: { description: 'The trigger.' } } },
  updateTrigger: { responses: { 200: { description: 'The trigger as changed.' } } },
  deleteTrigger: { responses: { 204: { description: 'Deleted.' } } },
  listRuns: { responses: { 200: { description: 'The most recent runs.' } } },
  processRuns: { responses: { 200: { description: 'The runs turned into proposals, and the reviews restarted.' } } },
  createWebhookEndpoint: { responses: { 201: { description: 'The endpoint and its signing secret (shown this once).', headers: ['Location'] } } },
  listWebhookEndpoints: { responses: { 200: { description: "The workspace's endpoints." } } },
  readWebhookEndpoint: { responses: { 200: { description: 'The endpoint.' } } },
  deleteWebhookEndpoint: { responses: { 204: { description: 'Deleted.' } } },
  listWebhookExecutions: { responses: { 200: { description: 'The most recent delivery attempts.' } } },
  createProposal: {
    headers: ['IdempotencyKeyRequired'],
    responses: { 201: { description: 'The proposal; its review has started.', headers: ['Location', 'IdempotentReplayed'] } },
  },
  listProposals: { responses: { 200: { description: 'A page of proposals.' } } },
  readProposal: { responses: { 200: { description: 'The proposal with its history and executions.' } } },
  previewProposal: { responses: { 200: { description: "What the proposal's note action would do to the notes as they are now, and whether Forge could apply it." } } },
  approveProposal: { responses: { 200: { description: 'Approved; the Forge execution starts.' } } },
  rejectProposal: { responses: { 200: { description: 'Rejected.' } } },
  undoProposal: { responses: { 202: { description: 'The undo has started.' } } },
  // Product Runtime operations carry their docs and examples beside their routes (schema.docs, schema.examples);
  // MCP's endpoint its own in its contribution (api/routes/mcp/openapi-docs.ts).
};

/** Operation ids this module describes: every one outside the Product Runtime and the contributions (for tests and the export script). */
export const documentedOperationIds = Object.keys(operations);

// ---- problems shared by operations -----------------------------------------------------------

type Operation = {
  operationId?: string;
  security?: Array<Record<string, unknown>>;
  parameters?: Array<Record<string, unknown>>;
  requestBody?: { content?: Record<string, Record<string, unknown>> };
  responses: Record<string, Record<string, unknown>>;
  'x-problems'?: readonly ErrorCode[];
  [key: string]: unknown;
};

/**
 * The codes every operation of a kind can answer with, whatever its route does: the edge's input
 * rules (api/edge.ts), validation, body parsing, and for token-authenticated interfaces
 * authentication, entitlement and the allowance (api/auth.ts).
 */
function automaticProblems(operation: Operation, path: string): ErrorCode[] {
  const codes: ErrorCode[] = ['invalid_character', 'duplicate_header', 'internal_error'];
  const runtime = path.startsWith(RUNTIME_PREFIX);
  // Every authenticated operation (admission reads Postgres) and every runtime route can meet a
  // database outage; the health routes answer their own way (/readyz: not_ready).
  if (runtime || (operation.security ?? []).length > 0) codes.push('database_unavailable');
  const hasInput = (operation.parameters ?? []).some((p) => p['in'] === 'query' || p['in'] === 'path') || operation.requestBody !== undefined;
  if (hasInput) codes.push('invalid_request');
  // A path parameter longer than the router takes is refused before the route (api/edge.ts).
  if ((operation.parameters ?? []).some((p) => p['in'] === 'path')) codes.push('uri_too_long');
  if (operation.requestBody !== undefined) codes.push('malformed_json', 'json_too_deep', 'unsupported_media_type', 'payload_too_large');
  // The runtime checks its version first, on every route (api/routes/product/kit.ts).
  if (runtime) codes.push('runtime_version_invalid', 'runtime_version_unsupported');
  if (runtime && (operation.security ?? []).length > 0) {
    // Every link of the chain, then the organization's month (the vault link only where a vault is named).
    codes.push(
      'credential_invalid',
      'service_principal_inactive',
      'installation_inactive',
      'product_definition_inactive',
      'organization_inactive',
      'workspace_not_assigned',
      'organization_quota_exhausted',
    );
    if ((operation['x-runtime-scope'] as string | null | undefined) !== null) codes.push('scope_missing');
  } else if ((operation.security ?? []).length > 0) {
    codes.push('authentication_required', 'invalid_token', 'account_inactive', 'entitlement_required', 'rate_limited', 'monthly_limit_exceeded');
  }
  return codes;
}

const codeOrder = Object.keys(errorCatalog) as ErrorCode[];

function problemResponses(operation: Operation, path: string, instance: string, parts: Parts): Record<string, Record<string, unknown>> {
  const codes = new Set([...automaticProblems(operation, path), ...(operation['x-problems'] ?? [])]);
  const runtime = path.startsWith(RUNTIME_PREFIX);
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codeOrder) {
    if (!codes.has(code)) continue;
    const { status } = errorCatalog[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, Record<string, unknown>> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const headers: ResponseHeader[] = runtime ? ['XRequestId', 'XServiceRuntimeVersion'] : ['XRequestId'];
    if (status === 401) headers.push('WWWAuthenticate');
    if (status === 429) headers.push('RetryAfter', 'RateLimit', 'RateLimitPolicy');
    if (list.includes('idempotency_in_flight') || status === 503) headers.push('RetryAfter');
    responses[String(status)] = {
      description: `Problem${list.length > 1 ? ' codes' : ' code'}:\n${list.map((code) => `- \`${code}\`: ${errorCatalog[code].title}`).join('\n')}`,
      headers: headerRefs(headers, parts),
      content: {
        'application/problem+json': {
          schema: { $ref: '#/components/schemas/Problem' },
          examples: Object.fromEntries(list.map((code) => [code, { summary: errorCatalog[code].title, value: problemExample(code, instance) }])),
        },
      },
    };
  }
  return responses;
}

/** Response header references by HTTP name; a name no component declares fails the build of the document. */
function headerRefs(names: readonly string[], parts: Parts) {
  return Object.fromEntries(
    [...new Set(names)].map((name) => {
      const http = parts.headerNames[name];
      if (http === undefined) throw new Error(`The response header ${name} is named by an operation but declared by no component (api/openapi.ts or a contribution).`);
      return [http, { $ref: `#/components/headers/${name}` }];
    }),
  );
}

const headerNames: Record<ResponseHeader, string> = {
  XRequestId: 'X-Request-Id',
  RateLimit: 'RateLimit',
  RateLimitPolicy: 'RateLimit-Policy',
  RetryAfter: 'Retry-After',
  ETag: 'ETag',
  IdempotentReplayed: 'Idempotent-Replayed',
  Location: 'Location',
  NoteLocation: 'Location',
  WWWAuthenticate: 'WWW-Authenticate',
  Vary: 'Vary',
  ContentDisposition: 'Content-Disposition',
  MediaETag: 'ETag',
  AcceptRanges: 'Accept-Ranges',
  ContentRange: 'Content-Range',
  MediaLocation: 'Location',
  XServiceRuntimeVersion: 'X-Service-Runtime-Version',
};

function applyExamples(target: Record<string, unknown>, set: ExampleSet | undefined): void {
  if (!set) return;
  if ('value' in set) target['example'] = set.value;
  else target['examples'] = set.examples;
}

/** The path with its parameters filled with example values, for problem `instance` members. */
function exampleInstance(path: string, operationId: string): string {
  const params = operationExamples[operationId]?.parameters ?? {};
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(String(params[name] ?? parameterExamples[name] ?? name)));
}


// ---- the document ----------------------------------------------------------------------------

type Swagger = Required<Pick<FastifyDynamicSwaggerOptions, 'openapi' | 'transform' | 'transformObject'>>;
type Document = {
  info: Record<string, unknown>;
  tags?: Array<{ name: string; description: string }>;
  servers?: Array<{ url: string; description?: string }>;
  paths: Record<string, Record<string, Operation>>;
  components: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
};

const tags = [
  { name: 'developer', description: 'The calling account.' },
  { name: 'workspaces', description: "The caller's workspaces and role in each." },
  { name: 'notes', description: 'Notes of a hosted vault: inventory, read, preview/apply writes, deletes through the trash, transactions, restore (docs/api.md).' },
  { name: 'events', description: 'Provenance events of a vault.' },
  { name: 'mcp', description: 'The MCP tool gateway (JSON-RPC 2.0, docs/mcp.md).' },
  { name: 'automation', description: 'Automation gateway: proposals and review, events, triggers, runs, webhooks, discovery (docs/automation.md).' },
  { name: 'product-runtime', description: 'Product Runtime V1: partner products through an installation service credential; every answer a versioned envelope (docs/product-runtime.md).' },
  { name: 'operations', description: 'Liveness and readiness probes.' },
  { name: 'documentation', description: 'This description, generated from the schemas the routes validate with.' },
];

/** What an operation's route schema (and a contribution's members for it) carries into the document, besides what @fastify/swagger reads. */
function transform(parts: Parts, input: Parameters<NonNullable<FastifyDynamicSwaggerOptions['transform']>>[0]) {
  const contributed = parts.routes.get(`${String(input.route.method)} ${input.url}`);
  const schema = contributed ? { ...input.schema, ...contributed } : input.schema;
  const result = jsonSchemaTransform({ ...input, schema } as Parameters<typeof jsonSchemaTransform>[0]);
  const transformed = result.schema as Record<string, unknown> | undefined;
  if (!transformed || transformed['hide']) return result;
  const { problems, docs, examples, ...rest } = transformed;
  // The runtime scope an operation declares (null: none), so its problems list scope_missing only where it can happen.
  const runtime = (input.route.config as { runtime?: { scope: string | null } } | undefined)?.runtime;
  // @fastify/swagger copies x- members onto the operation; completeDocument reads and removes them.
  return {
    ...result,
    schema: {
      ...rest,
      ...(problems ? { 'x-problems': problems } : {}),
      ...(runtime ? { 'x-runtime-scope': runtime.scope } : {}),
      ...(docs ? { 'x-doc': docs } : {}),
      ...(examples ? { 'x-examples': examples } : {}),
    } as FastifySchema,
  };
}

/**
 * An operation without an operationId or an entry above (a probe route a test adds, say) still gets
 * the shared parts; documentationGaps() names it, and the export script and the tests fail on it.
 */
const undocumented: OperationDoc = { responses: {} };

function completeOperation(path: string, operation: Operation, parts: Parts): void {
  const id = operation.operationId ?? '';
  const routeDoc = operation['x-doc'] as OperationDoc | undefined;
  const doc = routeDoc ?? operations[id] ?? undocumented;
  if (doc === undocumented) operation['x-undocumented'] = true;
  const examples = (operation['x-examples'] as OperationExamples | undefined) ?? operationExamples[id] ?? parts.examples[id] ?? {};

  for (const parameter of operation.parameters ?? []) {
    const name = String(parameter['name']);
    const example = examples.parameters?.[name] ?? parameterExamples[name];
    if (example !== undefined && parameter['example'] === undefined) parameter['example'] = example;
  }
  const problems = doc.jsonRpc ? {} : problemResponses(operation, path, exampleInstance(path, id), parts);
  delete operation['x-problems'];
  delete operation['x-runtime-scope'];
  delete operation['x-doc'];
  delete operation['x-examples'];
  const undescribed = Object.keys(operation.responses).filter((status) => Number(status) < 400 && !doc.responses[status]);
  if (undescribed.length > 0) operation['x-undescribed'] = undescribed;
  const runtime = path.startsWith(RUNTIME_PREFIX);
  const headerParams: string[] = [...(runtime ? (['XServiceRuntimeVersion'] as const) : []), ...(doc.headers ?? [])];
  for (const header of headerParams) {
    if (!(header in parts.parameters)) throw new Error(`${id} names the request header ${header}, which no component declares (api/openapi.ts or a contribution).`);
  }
  if (headerParams.length) operation.parameters = [...(operation.parameters ?? []), ...headerParams.map((h) => ({ $ref: `#/components/parameters/${h}` }))];

  if (doc.requestBody) operation.requestBody = doc.requestBody;
  const body = operation.requestBody?.content?.['application/json'];
  if (body) applyExamples(body, examples.request);

  const charged = (operation.security ?? []).length > 0 && !doc.jsonRpc;
  const statuses = new Set([...Object.keys(operation.responses).filter((status) => Number(status) < 400), ...Object.keys(doc.responses)]);
  const responses: Record<string, Record<string, unknown>> = {};
  for (const status of statuses) {
    const described = doc.responses[status];
    const response: Record<string, unknown> = { ...operation.responses[status], ...(described ? { description: described.description } : {}) };
    const common: string[] = [...(runtime ? ['XRequestId', 'XServiceRuntimeVersion'] : ['XRequestId']), ...(doc.everyResponseHeaders ?? [])];
    const chargedHeaders: ResponseHeader[] = charged && Number(status) < 400 ? ['RateLimit', 'RateLimitPolicy'] : [];
    response['headers'] = headerRefs([...common, ...chargedHeaders, ...(described?.headers ?? [])], parts);
    const content = response['content'] as Record<string, Record<string, unknown>> | undefined;
    const json = content?.['application/json'];
    if (json) applyExamples(json, examples.responses?.[status]);
    if (described?.content) response['content'] = described.content;
    if (id === 'readNote' && status === '200' && content) {
      response['content'] = { ...content, 'text/markdown': { schema: { type: 'string', description: 'The raw Markdown.' }, example: examples.markdown } };
    }
    if (examples.ndjson !== undefined && status === '200' && content) {
      response['content'] = {
        ...content,
        'application/x-ndjson': {
          schema: { type: 'string', description: 'One JSON event per line: ready, zero or more delta, done (GenerationStreamEvent in the SDK).' },
          example: examples.ndjson,
        },
      };
    }
    responses[status] = response;
  }
  operation.responses = { ...responses, ...problems };
}

/**
 * What keeps the document from being complete: operations without an operationId, without an
 * entry in api/openapi.ts, answering a success status the entry does not describe, or sharing an
 * operationId. Empty for the application as built; the export script and the tests insist.
 */
export function documentationGaps(document: {
  paths: Record<string, Record<string, { operationId?: string; 'x-undocumented'?: boolean; 'x-undescribed'?: string[] }>>;
}): string[] {
  const gaps: string[] = [];
  const seen = new Map<string, string>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const where = `${method.toUpperCase()} ${path}`;
      const id = operation.operationId;
      if (!id) {
        gaps.push(`${where} has no operationId`);
        continue;
      }
      if (seen.has(id)) gaps.push(`${where} repeats operationId ${id} of ${seen.get(id)}`);
      seen.set(id, where);
      if (operation['x-undocumented']) {
        gaps.push(`${where} (${id}) has no docs beside its route nor an entry in api/openapi.ts`);
        continue;
      }
      for (const status of operation['x-undescribed'] ?? []) gaps.push(`${where} (${id}) answers ${status}, which its docs do not describe`);
    }
  }
  for (const id of Object.keys(operations)) if (!seen.has(id)) gaps.push(`api/openapi.ts describes ${id}, which no route has`);
  return gaps;
}

/** Drops component schemas nothing in `document` refers to (zod registers input and output variants of each). */
function pruneComponents(document: Document): void {
  const reachable = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (!value || typeof value !== 'object') return;
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string' && child.startsWith('#/components/') && !reachable.has(child)) {
        reachable.add(child);
        const [, , kind, name] = child.split('/');
        visit(document.components[kind!]?.[name!]);
      } else visit(child);
    }
  };
  visit(document.paths);
  for (const [kind, entries] of Object.entries(document.components)) {
    if (kind === 'securitySchemes') continue;
    for (const name of Object.keys(entries)) if (!reachable.has(`#/components/${kind}/${name}`)) delete entries[name];
  }
}

/**
 * zod registers an input and an output variant of each named schema (`WriteRequestInput`,
 * `WriteRequest`); once the unused ones are gone, a lone input variant takes the plain name.
 */
function dropLoneInputSuffix(document: Document): void {
  const schemas = document.components['schemas'] ?? {};
  const renames = new Map<string, string>();
  for (const name of Object.keys(schemas)) if (name.endsWith('Input') && !(name.slice(0, -'Input'.length) in schemas)) renames.set(name, name.slice(0, -'Input'.length));
  if (renames.size === 0) return;
  const rename = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rename);
    if (!value || typeof value !== 'object') return value;
    return Object.fromEntries(
      Object.entries(value).map(([key, child]) => {
        const target = key === '$ref' && typeof child === 'string' ? renames.get(child.replace('#/components/schemas/', '')) : undefined;
        return [key, target ? `#/components/schemas/${target}` : rename(child)];
      }),
    );
  };
  document.paths = rename(document.paths) as Document['paths'];
  document.components['schemas'] = Object.fromEntries(Object.entries(rename(schemas) as Record<string, unknown>).map(([name, schema]) => [renames.get(name) ?? name, schema]));
}

/**
 * zod writes every int as bounded by ±Number.MAX_SAFE_INTEGER. Those bounds say nothing a client
 * needs and make sample generators show -9007199254740991; a real bound (min(1), max(1000)) stays.
 */
function dropSafeIntegerBounds(value: unknown): void {
  if (Array.isArray(value)) return value.forEach(dropSafeIntegerBounds);
  if (!value || typeof value !== 'object') return;
  const schema = value as Record<string, unknown>;
  if (schema['minimum'] === Number.MIN_SAFE_INTEGER) delete schema['minimum'];
  if (schema['maximum'] === Number.MAX_SAFE_INTEGER) delete schema['maximum'];
  Object.values(schema).forEach(dropSafeIntegerBounds);
}

function completeDocument(document: Document, parts: Parts): Document {
  document.tags = tags;
  document.components = {
    ...document.components,
    parameters: { ...parts.parameters },
    headers: { ...parts.headers },
  };
  for (const [path, item] of Object.entries(document.paths)) {
    for (const operation of Object.values(item)) completeOperation(path, operation, parts);
  }
  pruneComponents(document);
  dropLoneInputSuffix(document);
  dropSafeIntegerBounds(document);
  return document;
}

/**
 * What an interface adds to the document beyond its routes' own schemas, handed to swaggerOptions by
 * the composition root (api/app.ts), so this module knows no interface. `H` and `R`: the request and
 * response headers it declares, which its route schemas' docs may name beside the shared ones.
 */
export type DocumentContribution<H extends string = never, R extends string = never> = {
  /** Request headers it declares (components/parameters). */
  requestHeaders?: Record<H, RequestHeaderParameter>;
  /** Response headers it declares (components/headers), each with its HTTP name. */
  responseHeaders?: Record<R, ResponseHeaderComponent>;
  /** Schema members merged over a route's own, by method and URL (the MCP endpoint validates its raw body itself; the document shows the protocol). */
  routes?: ReadonlyArray<{ method: string; url: string; schema: Omit<FastifySchema, 'docs'> & { docs?: OperationDoc<H, R> } }>;
  /** Examples of operations whose routes carry none, by operationId. */
  examples?: Record<string, OperationExamples>;
};

/** This module's own parts and every contribution's, merged once. */
type Parts = {
  parameters: Record<string, RequestHeaderParameter>;
  headers: Record<string, Omit<ResponseHeaderComponent, 'name'>>;
  headerNames: Record<string, string>;
  routes: Map<string, Omit<FastifySchema, 'docs'> & { docs?: OperationDoc<string, string> }>;
  examples: Record<string, OperationExamples>;
};

function mergeParts(contributions: ReadonlyArray<DocumentContribution<string, string>>): Parts {
  const parts: Parts = { parameters: { ...requestHeaders }, headers: { ...responseHeaders }, headerNames: { ...headerNames }, routes: new Map(), examples: {} };
  const once = (where: Record<string, unknown>, key: string, what: string) => {
    if (key in where) throw new Error(`Two parts of the OpenAPI document declare the ${what} ${key}.`);
  };
  for (const contribution of contributions) {
    for (const [key, parameter] of Object.entries(contribution.requestHeaders ?? {})) {
      once(parts.parameters, key, 'request header');
      parts.parameters[key] = parameter;
    }
    for (const [key, { name, ...header }] of Object.entries(contribution.responseHeaders ?? {})) {
      once(parts.headers, key, 'response header');
      parts.headers[key] = header;
      parts.headerNames[key] = name;
    }
    for (const route of contribution.routes ?? []) parts.routes.set(`${route.method} ${route.url}`, route.schema);
    for (const [id, examples] of Object.entries(contribution.examples ?? {})) {
      once(parts.examples, id, 'examples of');
      parts.examples[id] = examples;
    }
  }
  return parts;
}

/** @fastify/swagger options: the document's frame, the per-route transform and the completion pass, with what the interfaces contribute. */
export function swaggerOptions(options: { publicBaseUrl?: string | undefined; contributions?: ReadonlyArray<DocumentContribution<string, string>> }): Swagger {
  const parts = mergeParts(options.contributions ?? []);
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Hosted Notes Platform',
        version: '1.0.0',
        description:
          'Developer REST API, MCP gateway, automation gateway and Product Runtime over hosted Markdown vaults. ' +
          'Every error is application/problem+json with a stable `code` (see the Problem schema; each response lists the codes it can carry). ' +
          'Conventions: docs/api.md.',
      },
      servers: [
        options.publicBaseUrl
          ? { url: options.publicBaseUrl, description: 'PUBLIC_BASE_URL' }
          : { url: '/', description: 'The server this document was fetched from (set PUBLIC_BASE_URL to publish an absolute URL).' },
      ],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'Personal access token (hnp_pat_…)' },
          serviceCredential: { type: 'http', scheme: 'bearer', description: 'Product Runtime installation service credential (hnp_svc_…), issued by System Operations' },
        },
      },
    },
    transform: (input) => transform(parts, input),
    transformObject: (input) => completeDocument(jsonSchemaTransformObject(input) as unknown as Document, parts) as never,
  };
}

/** The automation gateway's own document: its paths, and only the components they use. */
function automationDocument(whole: Document): Document {
  const document = structuredClone(whole);
  document.info = { ...document.info, title: 'Hosted Notes Platform — automation gateway', description: 'Proposals and review, events, triggers, runs, webhooks and discovery (docs/automation.md).' };
  document.paths = Object.fromEntries(Object.entries(document.paths).filter(([path]) => path.startsWith(AUTOMATION_PREFIX)));
  const used = new Set(Object.values(document.paths).flatMap((item) => Object.values(item).flatMap((operation) => (operation['tags'] as string[] | undefined) ?? [])));
  document.tags = (document.tags ?? []).filter((tag) => used.has(tag.name));
  // Only personal access tokens reach the automation gateway.
  delete document.components['securitySchemes']?.['serviceCredential'];
  pruneComponents(document);
  return document;
}

const documentSchema = z
  .looseObject({
    openapi: z.string(),
    info: z.looseObject({ title: z.string(), version: z.string() }),
    paths: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'OpenApiDocument' });

/** GET /openapi.json and GET /api/dev/automation/openapi.json: public, like the docs UI. */
export const openapiRoutes: FastifyPluginAsyncZod = async (app) => {
  const documentation = { tags: ['documentation'], security: [] };
  app.get(
    '/openapi.json',
    {
      schema: {
        ...documentation,
        operationId: 'readOpenApi',
        summary: 'This OpenAPI description (generated)',
        description: 'Every interface, generated from the zod schemas the routes validate with. Public: no token, nothing counted. The docs UI is at /docs.',
        response: { 200: documentSchema },
      },
    },
    async () => app.swagger() as unknown as z.infer<typeof documentSchema>,
  );
  let automation: Document | undefined;
  app.get(
    `${AUTOMATION_PREFIX}/openapi.json`,
    {
      schema: {
        ...documentation,
        operationId: 'readAutomationOpenApi',
        summary: 'The OpenAPI description of the automation gateway (generated)',
        description: 'The automation paths of /openapi.json with the components they use. Public: no token, nothing counted.',
        response: { 200: documentSchema },
      },
    },
    async () => (automation ??= automationDocument(app.swagger() as unknown as Document)) as unknown as z.infer<typeof documentSchema>,
  );
};
