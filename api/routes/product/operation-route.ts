// Runtime routes are registered from the SDK's operation table (packages/runtime-sdk/src/operations.ts),
// the one declaration of each operation's method, path, scope, vault binding, Idempotency-Key rule,
// metering, result kind and summary. A route file states only what the table cannot: its input
// schemas, its description and examples, its own refusals, and its handler:
//
//   app.route({
//     ...operationRoute('rubricDraft'),
//     schema: { description, body: rubricDraftInputSchema, problems: [...], docs, examples },
//     handler,
//   });
//
// completeOperationRoute (the runtime plugin's onRoute hook, registered by kit.ts) fills in the rest from the
// table, so the route, the OpenAPI document, the SDK and the pack's composition cannot disagree.
import type { FastifyRequest, RouteOptions } from 'fastify';
import { dtoSchemas, operationFacts, operationIdOf } from '@hosted-notes/runtime-sdk';
import type { IdempotencyRule, RuntimeByteOperationName, RuntimeKind, RuntimeOperationName } from '@hosted-notes/runtime-sdk';
import { AppError } from '../../../domain/errors.ts';
import type { ErrorCode } from '../../../domain/errors.ts';
import { requireIdempotencyKey } from '../../../domain/idempotency.ts';
import { idempotencyKeyHeader } from '../shared/headers.ts';
import type { OperationDoc } from '../../openapi.ts';
import type { RuntimeRouteConfig } from './route-shapes.ts';
import { runtimeEnvelope, runtimeSecurity } from './route-shapes.ts';

export type RuntimeOperation = RuntimeOperationName | RuntimeByteOperationName;

/** Refusals every metered operation may answer, beyond the chain's: the reservation's and the provider's. */
export const meteredProblems = [
  'workflow_service_unavailable',
  'intelligence_budget_missing',
  'intelligence_budget_exhausted',
  'intelligence_sublimit_exhausted',
  'intelligence_concurrency_exhausted',
  'intelligence_reservation_expired',
  'intelligence_request_failed',
  'intelligence_provider_rate_limited',
  'intelligence_provider_refused',
  'intelligence_provider_error',
  'intelligence_provider_unreachable',
  'intelligence_provider_timeout',
  'intelligence_provider_misconfigured',
  'intelligence_interrupted',
  'intelligence_output_invalid',
] as const satisfies readonly ErrorCode[];

/**
 * Whether every request to an operation with this rule is refused without an Idempotency-Key
 * (`required`, `caller`), or only some (`apply`: to apply) or none. The one reading of the table's
 * rule: operationKey enforces it, and the document publishes the header `required: true` by it.
 */
export const keyAlwaysRequired = (rule: IdempotencyRule): boolean => rule === 'required' || rule === 'caller';

/** The Idempotency-Key parameter (api/openapi.ts) of an operation with this rule, if it takes one. */
export function runtimeKeyHeader(rule: IdempotencyRule): 'RuntimeIdempotencyKey' | 'RuntimeIdempotencyKeyToApply' | undefined {
  if (rule === 'none') return undefined;
  return keyAlwaysRequired(rule) ? 'RuntimeIdempotencyKey' : 'RuntimeIdempotencyKeyToApply';
}

/** What an operation taking an Idempotency-Key may be refused with for it. */
const keyedProblems = ['idempotency_key_required', 'invalid_idempotency_key', 'idempotency_key_reused', 'idempotency_in_flight'] as const satisfies readonly ErrorCode[];

/**
 * The method, URL and chain needs of `name`, spread into `app.route`. `admitsInHandler`: the
 * handler admits the request itself, its own work fused into the chain's statement (readNote).
 */
export function operationRoute<N extends RuntimeOperation>(name: N, options: { admitsInHandler?: boolean } = {}) {
  const op = operationFacts(name);
  const runtime: RuntimeRouteConfig = {
    scope: op.scope,
    // A vault operation names its vault `:vaultId`; reads need a read grant, anything else (previews too) a write grant.
    ...(op.vault ? { vault: { param: 'vaultId', access: op.method === 'GET' ? 'read' : 'write' } } : {}),
    ...(options.admitsInHandler ? { admitsInHandler: true } : {}),
  };
  return { method: op.method, url: op.path, config: { operation: name, runtime } };
}

/**
 * The onRoute completion of a route declared with operationRoute: operationId, summary, tag,
 * security, the Idempotency-Key header, the metered and keyed refusals and the 200 envelope of its
 * kind, all from the table. A route that restates one of them differently fails at registration.
 */
export function completeOperationRoute(route: RouteOptions, mount: string): void {
  const name = route.config?.operation;
  if (name === undefined) throw new Error(`Product Runtime route ${String(route.method)} ${route.url} is not declared through operationRoute(name).`);
  const op = operationFacts(name);
  const where = `${name} (${String(route.method)} ${route.url})`;
  if (route.method !== op.method || route.url !== `${mount}${op.path}`) throw new Error(`${where} is not at ${op.method} ${mount}${op.path}, where the operation table puts it.`);
  const schema = { ...route.schema };
  const operationId = operationIdOf(name);
  if (schema.operationId !== undefined && schema.operationId !== operationId) throw new Error(`${where} names operationId ${String(schema.operationId)}; the table says ${operationId}.`);
  if (schema.summary !== undefined) throw new Error(`${where} states its own summary; the table's is used.`);
  const keyHeader = runtimeKeyHeader(op.idempotency);
  const keyed = keyHeader !== undefined;
  const docs: OperationDoc | undefined = schema.docs && {
    ...schema.docs,
    headers: [
      ...(keyHeader ? [keyHeader] : []),
      ...(schema.docs.headers ?? []).filter((header) => header !== 'RuntimeIdempotencyKey' && header !== 'RuntimeIdempotencyKeyToApply'),
    ],
  };
  const problems = new Set<ErrorCode>([...(schema.problems ?? []), ...(op.metered !== false ? meteredProblems : []), ...(keyed ? keyedProblems : [])]);
  const kind = op.kind as RuntimeKind | undefined;
  route.schema = {
    ...schema,
    tags: ['product-runtime'],
    security: runtimeSecurity,
    operationId,
    summary: `${name}: ${op.summary}`,
    ...(docs ? { docs } : {}),
    problems: [...problems],
    ...(schema.response === undefined && kind ? { response: { 200: runtimeEnvelope(kind, dtoSchemas[kind]) } } : {}),
  };
}

/**
 * The Idempotency-Key of a request to an operation the table keys (`required` or `caller`), refused
 * with idempotency_key_required or invalid_idempotency_key when absent or malformed. The only way a
 * handler reads its key, so the table's rule is what the service enforces: a route whose operation
 * the table declares unkeyed cannot take one.
 */
export function operationKey(request: FastifyRequest): string {
  const name = request.routeOptions.config.operation;
  const rule = name === undefined ? undefined : operationFacts(name).idempotency;
  if (rule === undefined || !keyAlwaysRequired(rule)) throw new AppError('internal_error', `The operation table declares no required Idempotency-Key for ${String(name)}.`);
  return requireIdempotencyKey(idempotencyKeyHeader(request));
}
