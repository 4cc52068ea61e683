// What every metered runtime route shares: its refusals beyond the chain's, the abort signal of a
// client that goes away, and the generation dependencies built from the runtime's (null when no
// provider is configured: the route then answers the unavailable envelope).
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { unavailable } from '@hosted-notes/runtime-sdk';
import { requireIdempotencyKey } from '../../../domain/idempotency.ts';
import { idempotencyKeyHeader } from '../shared/headers.ts';
import { runStructured } from './generation.ts';
import type { GenerationDeps, StructuredOperation, StructuredResult } from './generation.ts';
import type { RuntimeRouteDeps } from './kit.ts';
import { runtimeCaller } from './kit.ts';
import { MeteredRuns } from './metered-runs.ts';

/** Refusals every metered operation may answer, beyond the chain's. */
export const meteredProblems = [
  'workflow_service_unavailable',
  'idempotency_key_required',
  'invalid_idempotency_key',
  'idempotency_key_reused',
  'idempotency_in_flight',
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
] as const;

/** Aborted when the client goes away before the answer was written: the upstream request is aborted with it. */
export function disconnectSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

/** The dependencies of a metered route, or null when no provider is configured. */
export function generationDepsOf(deps: RuntimeRouteDeps, log: FastifyBaseLogger): GenerationDeps | null {
  const intelligence = deps.intelligence;
  return intelligence ? { db: deps.db, intelligence, log, runs: new MeteredRuns(deps.db, deps.temporal, deps.taskQueue, intelligence.timing) } : null;
}

/** The answer of a metered operation on a service without that model: nothing is generated or made up. */
export function intelligenceUnavailable<K extends string>(kind: K, what = 'A model provider') {
  return unavailable(kind, [{ part: 'intelligence', reason: 'capability_not_configured', detail: `${what} is not configured on this service; nothing is generated without it.` }]);
}

/** A structured metered operation for this request: its Idempotency-Key, its caller, its disconnect (runStructured). */
export function structuredAnswer<I, O>(
  generation: GenerationDeps,
  request: FastifyRequest & { body: I },
  reply: FastifyReply,
  op: StructuredOperation<I, O>,
  resultSchema: z.ZodType<O>,
): Promise<StructuredResult<O>> {
  const key = requireIdempotencyKey(idempotencyKeyHeader(request));
  return runStructured(generation, runtimeCaller(request), op, request.body, key, disconnectSignal(reply), resultSchema);
}
