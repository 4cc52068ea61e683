// Liveness and readiness. /healthz says the process serves HTTP; /readyz says its dependencies
// (Postgres, Temporal) answer, so a load balancer stops sending traffic when they do not.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../domain/errors.ts';
import { sendProblem } from '../problems.ts';

export type ReadinessCheck = () => Promise<void>;

const checkResult = z.object({ ok: z.boolean(), latencyMs: z.number(), error: z.string().optional() });
const readySchema = z.object({ status: z.literal('ready'), checks: z.record(z.string(), checkResult) });

const READINESS_TIMEOUT_MS = 2_000;

async function runCheck(check: ReadinessCheck): Promise<z.infer<typeof checkResult>> {
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
    return { ok: false, latencyMs: Math.round(performance.now() - started), error: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
  }
}

export const healthRoutes: FastifyPluginAsyncZod<{ checks: Record<string, ReadinessCheck> }> = async (app, options) => {
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

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['operations'],
        security: [],
        operationId: 'checkReadiness',
        summary: 'Readiness: Postgres and Temporal answer',
        description: 'Answers 200 when every dependency answers within 2 s, else 503 problem+json `not_ready` listing the checks. Public.',
        response: { 200: readySchema },
        problems: ['not_ready'],
      },
    },
    async (_request, reply) => {
      const names = Object.keys(options.checks);
      const results = await Promise.all(names.map((name) => runCheck(options.checks[name]!)));
      const checks = Object.fromEntries(names.map((name, i) => [name, results[i]!]));
      if (results.every((r) => r.ok)) return { status: 'ready' as const, checks };
      const failing = names.filter((_, i) => !results[i]!.ok);
      return sendProblem(reply, new AppError('not_ready', `Unavailable: ${failing.join(', ')}.`, { extensions: { checks } }));
    },
  );
};
