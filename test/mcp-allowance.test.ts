// MCP allowance: its own counters; refusals before a recognized operation consume nothing; one
// operation is reserved per recognized request, invalid arguments included; exact under parallel calls.
import type { FastifyInstance } from 'fastify';
import { sql } from 'slonik';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { TestDatabase } from './support/database.ts';
import { useTestApp } from './support/harness.ts';
import { accountWithToken, bearer, personalMapping } from './support/fixtures.ts';
import { mcpRaw } from './support/mcp.ts';
import { clearOfMinuteEnd } from './support/minute-window.ts';

let db: TestDatabase;
let app: FastifyInstance;

const ctx = useTestApp({
  overrides: {
    allowances: {
      rest: { perMinute: 100, perMonth: { developer_agent: 1000, team: 1000 } },
      mcp: { perMinute: 12, perMonth: { premium: 30, professional: 30, developer_agent: 30, team: 30 } },
    },
  },
});

beforeAll(async () => {
  ({ db, app } = ctx);
});

const used = async (accountId: string, iface: 'rest' | 'mcp') =>
  (await db.pool.maybeOneFirst(sql.type(z.object({ n: z.number() }))`SELECT month_count AS n FROM usage_counters WHERE account_id = ${accountId} AND interface = ${iface}`)) ?? 0;

describe('MCP allowance', () => {
  it('reserves one operation per recognized request, invalid arguments included; nothing for the rest', async () => {
    const { token, account } = await accountWithToken(db.pool, 'premium');
    const mcp = mcpRaw(app, token);
    await mcp.modern('server/discover');
    await mcp.modern('tools/list');
    await mcp.legacy('ping');
    const invalid = await mcp.call('search_notes', { query: 'no mapping' });
    expect(invalid.isError).toBe(true);
    expect(await used(account.id, 'mcp')).toBe(4);

    await mcp.post({ jsonrpc: '2.0', method: 'notifications/initialized' }); // a notification
    await mcp.post('{not json'); // -32700
    await mcp.legacy('prompts/list'); // unknown method
    await mcp.modern('tools/call', { name: 'no_such_tool', arguments: {} }); // unknown tool
    await mcp.modern('tools/list', {}, { 'mcp-method': 'ping' }); // header mismatch
    await app.inject({ method: 'POST', url: '/api/mcp', headers: { 'content-type': 'application/json' }, payload: '{}' }); // no token
    expect(await used(account.id, 'mcp')).toBe(4);
  });

  it('is exact under parallel calls: 12 per minute pass, the rest get 429 rate_limited and consume nothing', async () => {
    const { token, account } = await accountWithToken(db.pool, 'professional');
    const { mappingId } = await personalMapping(db.pool, account.id);
    const mcp = mcpRaw(app, token);
    await clearOfMinuteEnd(db.pool);
    const results = await Promise.all(Array.from({ length: 30 }, () => mcp.modern('tools/call', { name: 'get_vault_schema', arguments: { mappingId } })));
    const ok = results.filter((r) => r.statusCode === 200);
    const limited = results.filter((r) => r.statusCode === 429);
    expect(ok).toHaveLength(12);
    expect(limited).toHaveLength(18);
    for (const r of limited) {
      expect(r.data.error).toMatchObject({ code: -32029, data: { code: 'rate_limited' } });
      expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(r.headers['mcp-protocol-version']).toBe('2026-07-28');
      expect(r.headers['ratelimit']).toBe(`"minute";r=0;t=${r.headers['retry-after']}`);
    }
    // Counted answers carry the IETF RateLimit fields, each with what was left after it.
    expect(ok[0]!.headers['ratelimit-policy']).toBe('"minute";q=12;w=60, "month";q=30');
    const remaining = ok.map((r) => Number(/"minute";r=(\d+)/.exec(String(r.headers['ratelimit']))![1])).sort((a, b) => a - b);
    expect(remaining).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(await used(account.id, 'mcp')).toBe(12);
  });

  it('publishes the RateLimit fields on the fused single-note read too', async () => {
    const { token, account } = await accountWithToken(db.pool, 'team');
    const { mappingId } = await personalMapping(db.pool, account.id);
    const res = await mcpRaw(app, token).modern('tools/call', { name: 'get_note_content', arguments: { mappingId, path: 'Missing/Note.md' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['ratelimit-policy']).toBe('"minute";q=12;w=60, "month";q=30');
    expect(res.headers['ratelimit']).toMatch(/^"minute";r=11;t=\d+, "month";r=29;t=\d+$/);
  });

  it('refuses past the monthly allowance with monthly_limit_exceeded', async () => {
    const { token, account } = await accountWithToken(db.pool, 'team');
    await db.pool.query(sql.type(z.object({}))`
      INSERT INTO usage_counters (account_id, interface, month_start, month_count, minute_start, minute_count)
      VALUES (${account.id}, 'mcp', date_trunc('month', now(), 'UTC'), 30, date_trunc('minute', now()) - interval '2 minutes', 1)`);
    const res = await mcpRaw(app, token).legacy('ping');
    expect(res.statusCode).toBe(429);
    expect(res.data.error.data).toMatchObject({ code: 'monthly_limit_exceeded', monthLimit: 30 });
  });

  it('keeps MCP and REST allowances apart', async () => {
    const { token, account } = await accountWithToken(db.pool, 'team');
    const mcp = mcpRaw(app, token);
    for (let i = 0; i < 3; i++) await mcp.legacy('ping');
    for (let i = 0; i < 2; i++) expect((await app.inject({ method: 'GET', url: '/api/dev/me', headers: bearer(token) })).statusCode).toBe(200);
    expect(await used(account.id, 'mcp')).toBe(3);
    expect(await used(account.id, 'rest')).toBe(2);
  });
});
