// The usual shape of an integration test file: a fresh database cloned from the template and a
// real app built on it, torn down afterwards. Fields are filled in by beforeAll.
import type { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { Worker } from '@temporalio/worker';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, inject } from 'vitest';
import type { ActivityDeps } from '../../activities/index.ts';
import type { AppDeps } from '../../api/app.ts';
import { lazyTemporalConnection } from '../../platform/temporal.ts';
import { createPlatformWorker } from '../../workers/worker.ts';
import { buildTestApp } from './app.ts';
import { createTestDatabase } from './database.ts';
import type { TestDatabase } from './database.ts';

export type TestContext = { db: TestDatabase; app: FastifyInstance; url: string };

/** `listen: true` also serves on a loopback port (for real HTTP clients); `url` is its base. */
export function useTestApp(options: { overrides?: Partial<AppDeps>; listen?: boolean } = {}): TestContext {
  const ctx = {} as TestContext;
  beforeAll(async () => {
    ctx.db = await createTestDatabase();
    ctx.app = await buildTestApp(ctx.db.pool, options.overrides ?? {});
    if (options.listen) {
      await ctx.app.listen({ host: '127.0.0.1', port: 0 });
      const address = ctx.app.server.address();
      ctx.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    }
  });
  afterAll(async () => {
    await ctx.app?.close();
    await ctx.db?.drop();
  });
  return ctx;
}

export type WorkerTestContext = TestContext & { taskQueue: string; temporal: Connection };

/**
 * An app and a real platform worker sharing a task queue of their own, on the run's Temporal dev
 * server, for tests of workflows end to end.
 */
export function useTestAppWithWorker(options: { name: string; overrides?: Partial<AppDeps>; workerDeps?: Omit<ActivityDeps, 'db'> }): WorkerTestContext {
  const ctx = { taskQueue: `${options.name}-${process.pid}-${Date.now()}` } as WorkerTestContext;
  let worker: Worker | undefined;
  let running: Promise<void> | undefined;
  let workerConnection: NativeConnection | undefined;
  beforeAll(async () => {
    ctx.db = await createTestDatabase();
    ctx.temporal = lazyTemporalConnection(inject('temporalAddress'));
    ctx.app = await buildTestApp(ctx.db.pool, { temporal: { connection: ctx.temporal, namespace: 'default', taskQueue: ctx.taskQueue }, ...options.overrides });
    workerConnection = await NativeConnection.connect({ address: inject('temporalAddress') });
    worker = await createPlatformWorker({ connection: workerConnection, namespace: 'default', taskQueue: ctx.taskQueue, deps: { db: ctx.db.pool, ...options.workerDeps }, shutdownGraceTime: '1s' });
    running = worker.run();
  });
  afterAll(async () => {
    worker?.shutdown();
    await running;
    await workerConnection?.close();
    await ctx.app?.close();
    await ctx.db?.drop();
  });
  return ctx;
}
