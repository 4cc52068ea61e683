// REST allowances: requests per minute and per month, counted atomically in Postgres.
import type { FastifyInstance } from 'fastify';
import { sql } from 'slonik';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { updateAccount } from '../domain/identity/accounts.ts';
import type { TestDatabase } from './support/database.ts';
import { useTestApp } from './support/harness.ts';
import { accountWithToken, bearer } from './support/fixtures.ts';
import { clearOfMinuteEnd } from './support/minute-window.ts';

let db: TestDatabase;
let app: FastifyInstance;

const ctx = useTestApp({
  overrides: {
    allowances: {
      rest: { perMinute: 10, perMonth: { developer_agent: 1_000, team: 25 } },
      mcp: { perMinute: 10, perMonth: { premium: 10, professional: 10, developer_agent: 10, team: 10 } },
    },
  },
});

beforeAll(async () => {
  ({ db, app } = ctx);
});

const me = (token: string) => app.inject({ method: 'GET', url: '/api/dev/me', headers: bearer(token) });
const counted = (accountId: string) =>
  db.pool.maybeOneFirst(sql.type(z.object({ n: z.number() }))`SELECT month_count AS n FROM usage_counters WHERE account_id = ${accountId} AND interface = 'rest'`);

describe('REST allowance', () => {
  it('lets exactly the per-minute boundary through under 25 parallel requests, then 429 rate_limited with Retry-After', async () => {
    const { token, account } = await accountWithToken(db.pool, 'developer_agent');
    await clearOfMinuteEnd(db.pool);
    const results = await Promise.all(Array.from({ length: 25 }, () => me(token)));
    const ok = results.filter((r) => r.statusCode === 200);
    const limited = results.filter((r) => r.statusCode === 429);
    expect(ok).toHaveLength(10);
    expect(limited).toHaveLength(15);
    for (const r of limited) {
      expect(r.json()).toMatchObject({ code: 'rate_limited', minuteLimit: 10 });
      const retryAfter = Number(r.headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(r.headers['ratelimit-policy']).toMatch(/^"minute";q=10;w=60, "month";q=\d+$/);
      expect(r.headers['ratelimit']).toBe(`"minute";r=0;t=${retryAfter}`);
    }
    // Every counted answer says what remains of both boundaries (IETF RateLimit fields).
    expect(ok[0]!.headers['ratelimit-policy']).toMatch(/^"minute";q=10;w=60, "month";q=\d+$/);
    const remaining = ok.map((r) => Number(/"minute";r=(\d+);t=\d+/.exec(String(r.headers['ratelimit']))![1])).sort((a, b) => a - b);
    expect(remaining).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // Refused requests count nothing.
    expect(await counted(account.id)).toBe(10);
  });

  it('refuses past the monthly allowance with 429 monthly_limit_exceeded until next month', async () => {
    const { token, account } = await accountWithToken(db.pool, 'team');
    // Spread over "earlier minutes" of this month: start the month at 24 used.
    await db.pool.query(sql.type(z.object({}))`
      INSERT INTO usage_counters (account_id, interface, month_start, month_count, minute_start, minute_count)
      VALUES (${account.id}, 'rest', date_trunc('month', now(), 'UTC'), 24, date_trunc('minute', now()) - interval '5 minutes', 3)`);
    expect((await me(token)).statusCode).toBe(200);
    const refused = await me(token);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ code: 'monthly_limit_exceeded', monthLimit: 25 });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(60);
    expect(refused.headers['ratelimit']).toBe(`"month";r=0;t=${refused.headers['retry-after']}`);
    // A new month starts from zero.
    await db.pool.query(sql.type(z.object({}))`
      UPDATE usage_counters SET month_start = month_start - interval '1 month', minute_start = minute_start - interval '1 hour' WHERE account_id = ${account.id}`);
    expect((await me(token)).statusCode).toBe(200);
    expect(await counted(account.id)).toBe(1);
  });

  it('counts nothing for authentication or entitlement failures', async () => {
    const premium = await accountWithToken(db.pool, 'premium');
    expect((await me(premium.token)).statusCode).toBe(403);
    const inactive = await accountWithToken(db.pool, 'team');
    await updateAccount(db.pool, inactive.account.id, { status: 'suspended' });
    expect((await me(inactive.token)).statusCode).toBe(403);
    expect(await counted(premium.account.id)).toBeNull();
    expect(await counted(inactive.account.id)).toBeNull();
  });

  it('keeps accounts separate', async () => {
    const a = await accountWithToken(db.pool, 'developer_agent');
    const b = await accountWithToken(db.pool, 'developer_agent');
    await clearOfMinuteEnd(db.pool);
    await Promise.all(Array.from({ length: 10 }, () => me(a.token)));
    expect((await me(a.token)).statusCode).toBe(429);
    expect((await me(b.token)).statusCode).toBe(200);
  });
});
