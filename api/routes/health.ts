// Liveness and readiness. /healthz says the process serves HTTP; /readyz says its dependencies
// (Postgres, Temporal) answer, so a load balancer stops sending traffic when they do not. While
// Postgres is unreachable its check fails at once (the pool's connection attempt is refused, or cut
// at the 2 s below); a readiness probe that meets a database outage first writes the outage's one
// warn line (db/availability.ts), and its first successful ping ends the outage.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { DatabaseUnavailableError } from '../../db/availability.ts';
import { AppError } from '../../domain/errors.ts';
import { sendProblem } from '../problems.ts';

export type ReadinessCheck = () => Promise<void>;

const checkResult = z.object({ ok: z.boolean(), latencyMs: z.number(), error: z.string().optional() });
const readySchema = z.object({ status: z.literal('ready'), checks: z.record(z.string(), checkResult) });

const READINESS_TIMEOUT_MS = 2_000;

const drainingProblem = () =>
  new AppError('not_ready', 'Unavailable: this process is shutting down.', { extensions: { checks: { draining: { ok: false, latencyMs: 0, error: 'shutting down' } } } });

async function runCheck(check: ReadinessCheck, onFailure: (error: unknown) => void): Promise<z.infer<typeof checkResult>> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${READINESS_TIMEOUT_MS} ms`)), READINESS_TIMEOUT_MS);
      }),
    ]);
    return { ok: true, latencyMs: Math.round(performance.now() - started) };
  } catch (error) {
    onFailure(error);
    return { ok: false, latencyMs: Math.round(performance.now() - started), error: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `draining`: true once the process is shutting down (SIGTERM with SHUTDOWN_DRAIN_MS): /readyz then
 * answers 503 at once, without asking the dependencies, so a load balancer stops routing here
 * while the requests it still sends are served.
 */
export const healthRoutes: FastifyPluginAsyncZod<{ checks: Record<string, ReadinessCheck>; draining?: () => boolean }> = async (app, options) => {
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['operations'],
        security: [],
        operationId: 'checkLiveness',
        summary: 'Liveness',
        description: 'Answers 200 while the process serves HTTP; it checks no dependency. Public.',
        response: { 200: z.object({ status: z.literal('ok') }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  // What a load balancer checks: this process, not the dependencies every process shares. A
  // balancer that took every API out while Temporal is down or Postgres is slow would replace their
  // own answers (acknowledged writes while Temporal is down, 503 + Retry-After while Postgres is)
  // with its own 503s for everyone (docs/topology.md).
  app.get(
    '/readyz/process',
    {
      schema: {
        tags: ['operations'],
        security: [],
        operationId: 'checkProcessReadiness',
        summary: 'Readiness of this process, for load balancers',
        description:
          "Answers 200 while this process takes traffic and 503 problem+json `not_ready` (check `draining`) once it is shutting down. Checks no shared dependency: a balancer routes on it; /readyz says whether Postgres and Temporal answer. Public.",
        response: { 200: readySchema },
        problems: ['not_ready'],
      },
    },
    async (_request, reply) => {
      if (options.draining?.()) return sendProblem(reply, drainingProblem());
      return { status: 'ready' as const, checks: { process: { ok: true, latencyMs: 0 } } };
    },
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['operations'],
        security: [],
        operationId: 'checkReadiness',
        summary: 'Readiness: Postgres and Temporal answer',
        description:
          'Answers 200 when every dependency answers within 2 s, else 503 problem+json `not_ready` listing the checks; 503 with the check `draining` while the process shuts down (it still serves requests until its listener closes). Public.',
        response: { 200: readySchema },
        problems: ['not_ready'],
      },
    },
    async (request, reply) => {
      if (options.draining?.()) return sendProblem(reply, drainingProblem());
      const names = Object.keys(options.checks);
      const onFailure = (error: unknown) => {
        if (error instanceof DatabaseUnavailableError) error.outage.report(request.server.log, request.id);
      };
      const results = await Promise.all(names.map((name) => runCheck(options.checks[name]!, onFailure)));
      const checks = Object.fromEntries(names.map((name, i) => [name, results[i]!]));
      if (results.every((r) => r.ok)) return { status: 'ready' as const, checks };
      const failing = names.filter((_, i) => !results[i]!.ok);
      return sendProblem(reply, new AppError('not_ready', `Unavailable: ${failing.join(', ')}.`, { extensions: { checks } }));
    },
  );
};
