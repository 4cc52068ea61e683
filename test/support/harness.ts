// The usual shape of an integration test file: a fresh database cloned from the template and a
// real app built on it, torn down afterwards; useCaller adds the account most files start from.
// Fields are filled in by beforeAll, so read them inside hooks and tests.
import type { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { Worker } from '@temporalio/worker';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, inject } from 'vitest';
import type { ActivityDeps } from '../../activities/index.ts';
import type { AppDeps } from '../../api/app.ts';
import type { Account } from '../../domain/identity/accounts.ts';
import { interfaceEntitlements } from '../../domain/identity/plans.ts';
import type { Plan } from '../../domain/identity/plans.ts';
import { AllowanceLeases } from '../../domain/allowance-lease.ts';
import { defaultAllowances } from '../../domain/usage.ts';
import { lazyTemporalConnection } from '../../platform/temporal.ts';
import { createPlatformWorker } from '../../workers/worker.ts';
import { buildTestApp } from './app.ts';
import { createTestDatabase } from './database.ts';
import type { TestDatabase } from './database.ts';
import { devClient } from './dev-client.ts';
import type { DevClient } from './dev-client.ts';
import { accountWithToken, personalMapping } from './fixtures.ts';
import { mcpRaw } from './mcp.ts';
import type { McpRaw } from './mcp.ts';

/** Only a fresh database (no app); its fields are filled in by beforeAll, and it is dropped afterwards. */
export function useTestDatabase(): TestDatabase {
  const db = {} as TestDatabase;
  beforeAll(async () => {
    Object.assign(db, await createTestDatabase());
  });
  afterAll(async () => {
    await db.drop?.();
  });
  return db;
}

/**
 * Allowance leases with the default allowances over the file's test database, for tests that admit
 * callers through the domain: made before the file's tests, their unused reservations given back after.
 */
export function useAllowanceLeases(db: TestDatabase): { leases: AllowanceLeases } {
  const held = {} as { leases: AllowanceLeases };
  beforeAll(() => {
    held.leases = new AllowanceLeases(db.pool, defaultAllowances, interfaceEntitlements);
  });
  afterAll(async () => {
    await held.leases?.releaseAll();
  });
  return held;
}

export type TestContext = { db: TestDatabase; app: FastifyInstance; url: string };

export type TestAppOptions = { overrides?: Partial<AppDeps>; listen?: boolean };

/** `listen: true` also serves on a loopback port (for real HTTP clients); `url` is its base. */
export function useTestApp(options: TestAppOptions = {}): TestContext {
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

/** An account with a personal access token, and REST and MCP clients that send it. */
export type Caller = { account: Account; accountId: string; token: string; tokenId: string; api: DevClient; mcp: McpRaw };
/** A personal vault of the caller's and its mapping (what most note tests write into). */
export type CallerMapping = { vaultId: string; mappingId: string };
/** `plan` defaults to developer_agent; `mapping: false` creates no vault (the file makes its own). */
export type CallerOptions = { plan?: Plan; mapping?: boolean };

/** One more caller on a test app (for files that need a second account, a stranger…). */
export async function newCaller(ctx: TestContext, options: CallerOptions & { mapping: false }): Promise<Caller>;
export async function newCaller(ctx: TestContext, options?: CallerOptions): Promise<Caller & CallerMapping>;
export async function newCaller(ctx: TestContext, options: CallerOptions = {}): Promise<Caller | (Caller & CallerMapping)> {
  const { account, token, tokenId } = await accountWithToken(ctx.db.pool, options.plan ?? 'developer_agent');
  const caller: Caller = { account, accountId: account.id, token, tokenId, api: devClient(ctx.app, token), mcp: mcpRaw(ctx.app, token) };
  return options.mapping === false ? caller : { ...caller, ...(await personalMapping(ctx.db.pool, account.id)) };
}

/**
 * useTestApp plus the caller most files start from: a fresh database and app, an account with a
 * token on `plan`, its REST (`api`) and MCP (`mcp`) clients and, unless `mapping: false`, a
 * personal vault mapping (`mappingId`, `vaultId`).
 */
export function useCaller(options: TestAppOptions & CallerOptions & { mapping: false }): TestContext & Caller;
export function useCaller(options?: TestAppOptions & CallerOptions): TestContext & Caller & CallerMapping;
export function useCaller(options: TestAppOptions & CallerOptions = {}): TestContext & Caller & Partial<CallerMapping> {
  const ctx = useTestApp(options) as TestContext & Caller & Partial<CallerMapping>;
  beforeAll(async () => {
    Object.assign(ctx, await newCaller(ctx, options));
  });
  return ctx;
}

export type WorkerTestContext = TestContext & { taskQueue: string; temporal: Connection };

/** Overrides of the app's dependencies, or a function making them once earlier hooks ran (e.g. a started loopback provider's address). */
export type DepsOverrides = Partial<AppDeps> | (() => Partial<AppDeps>);

/**
 * An app and a real platform worker sharing a task queue of their own, on the run's Temporal dev
 * server, for tests of workflows end to end.
 */
export function useTestAppWithWorker(options: { name: string; overrides?: DepsOverrides; workerDeps?: Omit<ActivityDeps, 'db'>; listen?: boolean }): WorkerTestContext {
  const ctx = { taskQueue: `${options.name}-${process.pid}-${Date.now()}` } as WorkerTestContext;
  let worker: Worker | undefined;
  let running: Promise<void> | undefined;
  let workerConnection: NativeConnection | undefined;
  beforeAll(async () => {
    ctx.db = await createTestDatabase();
    ctx.temporal = lazyTemporalConnection(inject('temporalAddress'));
    const overrides = typeof options.overrides === 'function' ? options.overrides() : options.overrides;
    ctx.app = await buildTestApp(ctx.db.pool, { temporal: { connection: ctx.temporal, namespace: 'default', taskQueue: ctx.taskQueue }, ...overrides });
    if (options.listen) {
      await ctx.app.listen({ host: '127.0.0.1', port: 0 });
      const address = ctx.app.server.address();
      ctx.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    }
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
