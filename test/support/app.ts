// Builds the real application against a test database and the run's Temporal dev server.
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import pino from 'pino';
import { inject } from 'vitest';
import { buildApp } from '../../api/app.ts';
import type { AppDeps } from '../../api/app.ts';
import type { DatabasePool } from '../../db/pool.ts';
import { lazyTemporalConnection } from '../../platform/temporal.ts';

export const TEST_TASK_QUEUE_PREFIX = 'test-';

export async function buildTestApp(
  db: DatabasePool,
  overrides: Partial<AppDeps> = {},
  configure?: (app: FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, ZodTypeProvider>) => void,
): Promise<FastifyInstance> {
  const connection = overrides.temporal?.connection ?? lazyTemporalConnection(inject('temporalAddress'));
  const app = await buildApp({
    db,
    temporal: { connection, namespace: 'default', taskQueue: `${TEST_TASK_QUEUE_PREFIX}${process.pid}` },
    logger: pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' }),
    ...overrides,
  });
  app.addHook('onClose', async () => {
    if (!overrides.temporal) await connection.close();
  });
  configure?.(app.withTypeProvider<ZodTypeProvider>());
  await app.ready();
  return app;
}
