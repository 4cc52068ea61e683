// The automation gateway checks the automation entitlement on its own, and counts against the REST
// allowance (the spec names no automation allowance). Every plan that includes REST also includes
// automation, so the app is built with a plans table where developer_agent has REST but not automation.
import type { FastifyInstance } from 'fastify';
import { sql } from 'slonik';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { interfaceEntitlements } from '../domain/identity/plans.ts';
import type { TestDatabase } from './support/database.ts';
import { useTestApp } from './support/harness.ts';
import { accountWithToken, bearer } from './support/fixtures.ts';

let db: TestDatabase;
let app: FastifyInstance;

const ctx = useTestApp({
  overrides: {
    entitlements: { ...interfaceEntitlements, automation: ['team'] },
    allowances: {
      rest: { perMinute: 600, perMonth: { developer_agent: 1_000, team: 1_000 } },
      mcp: { perMinute: 300, perMonth: { premium: 10, professional: 10, developer_agent: 10, team: 10 } },
    },
  },
});

beforeAll(async () => {
  ({ db, app } = ctx);
});

const get = (url: string, token: string) => app.inject({ method: 'GET', url, headers: bearer(token) });
const counted = (accountId: string) =>
  db.pool.any(sql.type(z.object({ interface: z.string(), n: z.number() }))`
    SELECT interface, month_count AS n FROM usage_counters WHERE account_id = ${accountId} ORDER BY interface`);

describe('automation entitlement', () => {
  it('refuses a plan without automation on /api/dev/automation/* while its REST calls work, and counts nothing for the refusal', async () => {
    const { token, account } = await accountWithToken(db.pool, 'developer_agent');
    const me = await get('/api/dev/me', token);
    expect(me.statusCode).toBe(200);
    expect(me.json()).toMatchObject({ entitlements: { rest: true, mcp: true, automation: false } });

    for (const url of ['/api/dev/automation/catalog', '/api/dev/automation/proposals?workspaceId=00000000-0000-4000-8000-000000000000']) {
      const refused = await get(url, token);
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toMatchObject({ code: 'entitlement_required', plan: 'developer_agent', requiredPlans: ['team'] });
      expect(refused.json().detail).toContain('automation interface');
      expect(refused.headers['ratelimit']).toBeUndefined();
    }
    // Only the REST call was counted.
    expect(await counted(account.id)).toEqual([{ interface: 'rest', n: 1 }]);
  });

  it('serves an entitled plan and counts the request against the REST allowance', async () => {
    const { token, account } = await accountWithToken(db.pool, 'team');
    const catalog = await get('/api/dev/automation/catalog', token);
    expect(catalog.statusCode).toBe(200);
    expect(catalog.headers['ratelimit-policy']).toBe('"minute";q=600;w=60, "month";q=1000');
    expect(await counted(account.id)).toEqual([{ interface: 'rest', n: 1 }]);
  });

  it('names the automation interface when refusing a plan with neither REST nor automation', async () => {
    const { token } = await accountWithToken(db.pool, 'premium');
    const refused = await get('/api/dev/automation/catalog', token);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'entitlement_required', plan: 'premium', requiredPlans: ['team'] });
    expect(refused.json().detail).toContain('automation interface');
  });
});
