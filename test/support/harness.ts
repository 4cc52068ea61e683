// The usual shape of an integration test file: a fresh database cloned from the template and a
// real app built on it, torn down afterwards. Fields are filled in by beforeAll.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import type { AppDeps } from '../../api/app.ts';
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
