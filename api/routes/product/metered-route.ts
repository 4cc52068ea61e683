// What every metered runtime route shares: the abort signal of a client that goes away, the
// generation dependencies built from the runtime's (null when no provider is configured: the route
// then answers the unavailable envelope), and the structured operations' call of the lifecycle.
import { operationKey } from './operation-route.ts';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { unavailable } from '@hosted-notes/runtime-sdk';
import { runStructured } from '../../../domain/intelligence/generation.ts';
import type { GenerationDeps, StructuredOperation, StructuredResult } from '../../../domain/intelligence/generation.ts';
import type { RuntimeRouteDeps } from './kit.ts';
import { runtimeCaller } from './kit.ts';
import { temporalMeteringWorkflows } from './metering-workflows.ts';

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
  return intelligence ? { db: deps.db, intelligence, log, timing: intelligence.timing, workflows: temporalMeteringWorkflows(deps.temporal, deps.taskQueue) } : null;
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
  meteredKind: string,
  op: StructuredOperation<I, O>,
): Promise<StructuredResult<O>> {
  const key = operationKey(request);
  return runStructured(generation, runtimeCaller(request), meteredKind, op, request.body, key, disconnectSignal(reply));
}
