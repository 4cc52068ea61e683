// Postgres unreachable (issue 25): an app whose pool reaches the test database through a loopback
// TCP proxy (test/support/tcp-proxy.ts), which the test stops — new connections refused, open ones
// cut — and starts again; the real Postgres is never touched. While it is down every interface
// answers 503 database_unavailable with Retry-After (MCP: a JSON-RPC error with the code in data),
// authentication included, /readyz is not ready, and the app's log holds one warn line for the
// outage and no error-level stack; once it is back the same requests succeed in the same app, and
// one recovery line is logged.
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DatabaseUnavailableError, unreachableReason } from '../db/availability.ts';
import { createDatabasePool } from '../db/pool.ts';
import type { DatabasePool } from '../db/pool.ts';
import { errorCatalog } from '../domain/errors.ts';
import { buildTestApp } from './support/app.ts';
import { consoleGet, consoleSignIn } from './support/console.ts';
import type { ConsoleSession } from './support/console.ts';
import { devClient } from './support/dev-client.ts';
import type { DevClient } from './support/dev-client.ts';
import { useTestDatabase } from './support/harness.ts';
import { mcpRaw } from './support/mcp.ts';
import type { McpRaw } from './support/mcp.ts';
import { buildRuntimeChain, runtimeClient } from './support/product-runtime.ts';
import type { RuntimeChain, RuntimeClient } from './support/product-runtime.ts';
import { TcpProxy } from './support/tcp-proxy.ts';

type LogLine = { level: number; msg: string; [field: string]: unknown };
const WARN = 40;
const ERROR = 50;

const db = useTestDatabase();
const lines: LogLine[] = [];
const sink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    for (const line of chunk.toString().split('\n')) if (line.trim()) lines.push(JSON.parse(line) as LogLine);
    done();
  },
});

let proxy: TcpProxy;
let pool: DatabasePool;
let app: FastifyInstance;
let chain: RuntimeChain;
let api: DevClient;
let mcp: McpRaw;
let runtime: RuntimeClient;
let session: ConsoleSession;

const NOTE = 'Units/Fractions.md';

beforeAll(async () => {
  const target = new URL(db.url);
  proxy = new TcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  await proxy.start();
  // A short connect timeout only bounds a hung connect; a refused one fails at once.
  pool = await createDatabasePool(proxy.urlThrough(db.url), { maxPoolSize: 5, connectionTimeoutMs: 1_000 });
  app = await buildTestApp(pool, { logger: pino({ level: 'info' }, sink) });
  // A team account owns the chain's workspace: REST, MCP, automation and the console are all in its plan.
  chain = await buildRuntimeChain(db.pool);
  api = devClient(app, chain.owner.token);
  mcp = mcpRaw(app, chain.owner.token);
  runtime = runtimeClient(app, chain.secret);
  expect((await api.apply({ mappingId: chain.mappingId, path: NOTE, content: '# Fractions\n' })).statusCode).toBe(201);
  session = await consoleSignIn(app, chain.owner.token);
});

afterAll(async () => {
  await app?.close();
  await pool?.end();
  await proxy?.close();
});

/** One request per interface; each answers as `expectUp` or `expectDown` says. */
const requests = {
  restRead: () => api.read(chain.mappingId, NOTE),
  restInventory: () => api.inventory(chain.mappingId),
  mcpFusedRead: () => mcp.modern('tools/call', { name: 'get_note_content', arguments: { mappingId: chain.mappingId, path: NOTE } }),
  mcpSearch: () => mcp.modern('tools/call', { name: 'search_notes', arguments: { mappingId: chain.mappingId, query: 'fractions' } }),
  automation: () => api.request('GET', `/api/dev/automation/proposals?workspaceId=${chain.workspaceId}`),
  runtime: () => runtime.readNote(chain.vaultId, NOTE),
  consolePage: () => consoleGet(app, session, '/console'),
  consoleJson: () => consoleGet(app, session, '/console', { accept: 'application/json' }),
};

const expectDatabaseUnavailable = (res: { statusCode: number; headers: Record<string, unknown>; body: string }, name: string) => {
  expect({ name, status: res.statusCode, retryAfter: res.headers['retry-after'] }).toEqual({ name, status: 503, retryAfter: '5' });
};

describe('Postgres unreachable', () => {
  it('answers 503 database_unavailable with Retry-After on every interface, logs the outage once, and recovers without a restart', async () => {
    // Up: every request succeeds, and the pool holds open connections through the proxy.
    for (const [name, request] of Object.entries(requests)) expect({ name, status: (await request()).statusCode }).toEqual({ name, status: 200 });
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    const before = lines.length;

    await proxy.stop('reset');

    // REST: a read (the fused single-note read, admission in its statement) and the inventory.
    for (const name of ['restRead', 'restInventory'] as const) {
      const res = await requests[name]();
      expectDatabaseUnavailable(res, name);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.data).toMatchObject({ type: '/problems/database_unavailable', code: 'database_unavailable', status: 503, title: errorCatalog.database_unavailable.title, retryAfterSeconds: 5 });
    }
    // REST: a write; a refused connection sent Postgres nothing, and the detail says so.
    const key = randomUUID();
    const write = await api.apply({ mappingId: chain.mappingId, path: 'Units/Decimals.md', content: '# Decimals\n' }, {}, key);
    expectDatabaseUnavailable(write, 'restWrite');
    expect(write.data).toMatchObject({ code: 'database_unavailable', detail: expect.stringContaining('could not open a connection') });

    // MCP: the fused read and an admitted tool call are JSON-RPC errors of their own id, the code in data.
    for (const name of ['mcpFusedRead', 'mcpSearch'] as const) {
      const res = await requests[name]();
      expectDatabaseUnavailable(res, name);
      expect(res.data).toMatchObject({ jsonrpc: '2.0', id: expect.any(Number), error: { code: -32603, data: { code: 'database_unavailable', status: 503, retryAfterSeconds: 5 } } });
      expect(res.data.result).toBeUndefined();
    }

    // The automation gateway, the Product Runtime: problem+json like REST.
    for (const name of ['automation', 'runtime'] as const) {
      const res = await requests[name]();
      expectDatabaseUnavailable(res, name);
      expect(JSON.parse(res.body)).toMatchObject({ code: 'database_unavailable', status: 503 });
    }

    // The console: a page for a person, problem+json for a script; its session is not dropped.
    const page = await requests.consolePage();
    expectDatabaseUnavailable(page, 'consolePage');
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.body).toContain('database_unavailable');
    expect(page.headers['set-cookie']).toBeUndefined();
    const json = await requests.consoleJson();
    expectDatabaseUnavailable(json, 'consoleJson');
    expect(json.json()).toMatchObject({ code: 'database_unavailable' });

    // Authentication needs the database too: a token, a console sign-in and a service credential
    // all answer 503, never 401 (nobody is told their credential is wrong while it cannot be checked).
    const unknownToken = await devClient(app, `hnp_pat_${'x'.repeat(43)}`).inventory(chain.mappingId);
    expectDatabaseUnavailable(unknownToken, 'unknown token');
    const signIn = await app.inject({ method: 'POST', url: '/console/sign-in', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `token=${chain.owner.token}` });
    expectDatabaseUnavailable(signIn, 'console sign-in');
    expectDatabaseUnavailable(await runtimeClient(app, `hnp_svc_${'x'.repeat(43)}`).context(), 'unknown credential');

    // Not ready; alive.
    const ready = await app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toMatchObject({ code: 'not_ready', checks: { postgres: { ok: false, error: expect.stringContaining('database unreachable') }, temporal: { ok: true } } });
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);

    // One warn line for the whole outage, with the class and code; no stack, nothing at error level.
    const during = lines.slice(before);
    expect(during.filter((l) => l.level >= ERROR)).toEqual([]);
    const warnings = during.filter((l) => l.level === WARN);
    // The first request to meet the outage decides its reason: a pooled connection the cut reset
    // (ECONNRESET) or a refused new one (ConnectionError, ECONNREFUSED).
    expect(warnings).toEqual([expect.objectContaining({ msg: 'database unreachable', code: expect.stringMatching(/^ECONN(RESET|REFUSED)$/), requestId: expect.any(String) })]);
    expect(JSON.stringify(warnings)).not.toContain('stack');
    expect(during.some((l) => l.msg === 'database reachable again')).toBe(false);

    await proxy.start();

    // Back, in the same app and pool: the same requests succeed, and the refused write applies once.
    for (const [name, request] of Object.entries(requests)) expect({ name, status: (await request()).statusCode }).toEqual({ name, status: 200 });
    const retried = await api.apply({ mappingId: chain.mappingId, path: 'Units/Decimals.md', content: '# Decimals\n' }, {}, key);
    expect(retried.statusCode).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);

    const after = lines.slice(before);
    expect(after.filter((l) => l.level >= WARN)).toHaveLength(1);
    const recovered = after.filter((l) => l.msg === 'database reachable again');
    expect(recovered).toEqual([expect.objectContaining({ level: 30, outageMs: expect.any(Number), refusedRequests: expect.any(Number) })]);
    expect(recovered[0]!['refusedRequests']).toBeGreaterThanOrEqual(12);
  });
});

/** Resolves once a statement whose text contains `marker` is running in the test database (polled, no timing assumed). */
async function runningStatement(marker: string): Promise<number> {
  for (;;) {
    const pid = await db.pool.maybeOneFirst(
      sql.type(z.object({ pid: z.number() }))`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid() AND strpos(query, ${marker}) > 0`,
    );
    if (pid !== null) return pid;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const failureOf = (promise: Promise<unknown>) => promise.then(() => new Error('expected a failure'), (error: unknown) => error);

describe('what a lost connection means for the step that failed', () => {
  it('a transaction cut before its COMMIT: rolled back, and nothing of it is kept', async () => {
    await db.pool.query(sql.type(z.object({}))`CREATE TABLE IF NOT EXISTS outage_probe (id text PRIMARY KEY)`);
    const cut = failureOf(
      pool.transaction(async (tx) => {
        await tx.query(sql.type(z.object({}))`INSERT INTO outage_probe (id) VALUES ('in-transaction')`);
        await tx.query(sql.type(z.object({ probe: z.string() }))`SELECT 'probe-transaction' AS probe, pg_sleep(3)::text`);
      }),
    );
    await runningStatement('probe-transaction');
    await proxy.stop('close');
    const error = await cut;
    await proxy.start();
    expect(error).toBeInstanceOf(DatabaseUnavailableError);
    expect(error).toMatchObject({ step: 'rolled_back' });
    expect(await pool.exists(sql.type(z.object({}))`SELECT 1 FROM outage_probe WHERE id = 'in-transaction'`)).toBe(false);
  });

  it('a single statement cut in flight (the server closing its end): outcome unknown', async () => {
    const cut = failureOf(pool.query(sql.type(z.object({ probe: z.string() }))`SELECT 'probe-statement' AS probe, pg_sleep(3)::text`));
    await runningStatement('probe-statement');
    await proxy.stop('close');
    const error = await cut;
    await proxy.start();
    expect(error).toBeInstanceOf(DatabaseUnavailableError);
    expect(error).toMatchObject({ step: 'unknown', reason: { errorClass: 'BackendTerminatedUnexpectedlyError' } });
    expect(await pool.oneFirst(sql.type(z.object({ ok: z.number() }))`SELECT 1 AS ok`)).toBe(1);
  });

  it('a session Postgres terminates (57P01, as a shutdown or pg_terminate_backend does) is an outage too; the next query ends it', async () => {
    const cut = failureOf(pool.query(sql.type(z.object({ probe: z.string() }))`SELECT 'probe-terminated' AS probe, pg_sleep(3)::text`));
    const pid = await runningStatement('probe-terminated');
    await db.pool.query(sql.type(z.object({ ok: z.boolean() }))`SELECT pg_terminate_backend(${pid}) AS ok`);
    const error = await cut;
    expect(error).toBeInstanceOf(DatabaseUnavailableError);
    expect((error as DatabaseUnavailableError).reason.errorClass).toMatch(/^BackendTerminated/);
    expect((error as DatabaseUnavailableError).outage.ended).toBe(false);
    expect(await pool.oneFirst(sql.type(z.object({ ok: z.number() }))`SELECT 1 AS ok`)).toBe(1);
    expect((error as DatabaseUnavailableError).outage.ended).toBe(true);
  });

  it('a query that fails for any other reason stays what it is', async () => {
    const error = await failureOf(pool.query(sql.type(z.object({ x: z.number() }))`SELECT 1 / 0 AS x`));
    expect(error).not.toBeInstanceOf(DatabaseUnavailableError);
    expect(error).toMatchObject({ code: '22012' });
    const timeout = await failureOf(pool.transaction(async (tx) => {
      await tx.query(sql.type(z.object({}))`SET LOCAL statement_timeout = 10`);
      await tx.query(sql.type(z.object({ slept: z.string() }))`SELECT pg_sleep(1)::text AS slept`);
    }));
    expect(timeout).not.toBeInstanceOf(DatabaseUnavailableError);
  });
});

describe('recognizing an unreachable database', () => {
  const system = (code: string, syscall = 'connect') => Object.assign(new Error(`${syscall} ${code}`), { code, syscall, errno: -1 });
  const postgres = (code: string) => Object.assign(new Error('from Postgres'), { code, severity: 'FATAL' });

  it('by SQLSTATE, by socket error and by node-postgres\'s two bare messages', () => {
    for (const code of ['57P01', '57P02', '57P03', '08006', '08001', '53300']) expect(unreachableReason(postgres(code)), code).toEqual({ errorClass: 'Error', code });
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE']) expect(unreachableReason(system(code)), code).toMatchObject({ code });
    expect(unreachableReason(new Error('Connection terminated unexpectedly'))).toEqual({ errorClass: 'Error', code: null });
  });

  it('not a query the database answered, nor other I/O that merely carries a refused socket', () => {
    for (const code of ['57014', '25P03', '23505', '40001', '53200']) expect(unreachableReason(postgres(code)), code).toBeNull();
    expect(unreachableReason(new TypeError('fetch failed', { cause: system('ECONNREFUSED') }))).toBeNull();
    expect(unreachableReason(Object.assign(new Error('not a socket'), { code: 'ECONNREFUSED' }))).toBeNull();
    expect(unreachableReason(new Error('Connection terminated unexpectedly, said a provider'))).toBeNull();
    expect(unreachableReason('ECONNREFUSED')).toBeNull();
  });
});
