// Allowances hold under concurrency across API processes: two apps on one database, each with its
// own pool and allowance leases (as two replicas have), serve 200 parallel calls of one account and
// never more than its monthly allowance, nor fewer; refused calls count nothing. REST and the
// automation gateway draw on the one REST allowance; the fused single-note reads count like any
// other request.
import type { FastifyInstance } from 'fastify';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AppDeps } from '../api/app.ts';
import { createDatabasePool } from '../db/pool.ts';
import type { DatabasePool } from '../db/pool.ts';
import { buildTestApp } from './support/app.ts';
import { accountWithToken, bearer, personalMapping } from './support/fixtures.ts';
import { useTestApp } from './support/harness.ts';
import { mcpRaw } from './support/mcp.ts';

const REST_MONTH = 50;
const MCP_MONTH = 40;
const CALLERS = 200;

// Minute boundaries far above the load, so only the monthly allowance can refuse.
const overrides: Partial<AppDeps> = {
  allowances: {
    rest: { perMinute: 10_000, perMonth: { developer_agent: REST_MONTH, team: REST_MONTH } },
    mcp: { perMinute: 10_000, perMonth: { premium: MCP_MONTH, professional: MCP_MONTH, developer_agent: MCP_MONTH, team: MCP_MONTH } },
  },
};

const ctx = useTestApp({ overrides });
let secondPool: DatabasePool;
let second: FastifyInstance;
let apps: FastifyInstance[];

beforeAll(async () => {
  secondPool = await createDatabasePool(ctx.db.url, { maxPoolSize: 10 });
  second = await buildTestApp(secondPool, overrides);
  apps = [ctx.app, second];
});
afterAll(async () => {
  await second?.close();
  await secondPool?.end();
});

const counted = (accountId: string, iface: 'rest' | 'mcp') =>
  ctx.db.pool.maybeOneFirst(sql.type(z.object({ n: z.number() }))`SELECT month_count AS n FROM usage_counters WHERE account_id = ${accountId} AND interface = ${iface}`);

describe(`${CALLERS} parallel callers of one account on two API processes`, () => {
  it(`REST and automation together: exactly ${REST_MONTH} served, the rest 429 monthly_limit_exceeded and uncounted`, async () => {
    const { token, account } = await accountWithToken(ctx.db.pool, 'developer_agent');
    const { mappingId } = await personalMapping(ctx.db.pool, account.id);
    const urls = ['/api/dev/me', `/api/dev/notes/Missing/Note.md?mappingId=${mappingId}`, '/api/dev/automation/catalog'];
    const results = await Promise.all(
      Array.from({ length: CALLERS }, (_, i) => apps[i % 2]!.inject({ method: 'GET', url: urls[i % urls.length]!, headers: bearer(token) })),
    );
    const served = results.filter((r) => r.statusCode !== 429);
    const refused = results.filter((r) => r.statusCode === 429);
    expect(served).toHaveLength(REST_MONTH);
    // Each served call is what its route answers: the account, the (missing) note, the catalog.
    for (const r of served) expect([200, 404]).toContain(r.statusCode);
    for (const r of refused) expect(r.json()).toMatchObject({ code: 'monthly_limit_exceeded', monthLimit: REST_MONTH, interface: 'rest' });
    expect(await counted(account.id, 'rest')).toBe(REST_MONTH);
    expect(await counted(account.id, 'mcp')).toBeNull();
  });

  it(`MCP, fused reads and other operations: exactly ${MCP_MONTH} served, the rest -32029 and uncounted`, async () => {
    const { token, account } = await accountWithToken(ctx.db.pool, 'premium');
    const { mappingId } = await personalMapping(ctx.db.pool, account.id);
    const clients = apps.map((app) => mcpRaw(app, token));
    const results = await Promise.all(
      Array.from({ length: CALLERS }, (_, i) => {
        const mcp = clients[i % 2]!;
        return i % 3 === 0 ? mcp.legacy('ping') : mcp.modern('tools/call', { name: 'get_note_content', arguments: { mappingId, path: 'Missing/Note.md' } });
      }),
    );
    const served = results.filter((r) => r.statusCode === 200);
    const refused = results.filter((r) => r.statusCode === 429);
    expect(served).toHaveLength(MCP_MONTH);
    expect(refused).toHaveLength(CALLERS - MCP_MONTH);
    for (const r of refused) expect(r.data.error).toMatchObject({ code: -32029, data: { code: 'monthly_limit_exceeded' } });
    expect(await counted(account.id, 'mcp')).toBe(MCP_MONTH);
    expect(await counted(account.id, 'rest')).toBeNull();
  });
});
