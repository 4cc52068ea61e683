// Personal access tokens and plan entitlements, end to end through the HTTP edge.
import type { FastifyInstance } from 'fastify';
import { sql } from 'slonik';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { issueAccessToken, revokeAccessToken, rotateAccessToken, updateAccount } from '../domain/identity/accounts.ts';
import type { TestDatabase } from './support/database.ts';
import { useTestApp } from './support/harness.ts';
import { accountWithToken, bearer } from './support/fixtures.ts';

let db: TestDatabase;
let app: FastifyInstance;

const ctx = useTestApp();

beforeAll(async () => {
  ({ db, app } = ctx);
});

const me = (headers: Record<string, string>) => app.inject({ method: 'GET', url: '/api/dev/me', headers });

async function databaseText(): Promise<string> {
  const tables = await db.pool.anyFirst(sql.type(z.object({ table_name: z.string() }))`
    SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`);
  const dumps: string[] = [];
  for (const table of tables) {
    dumps.push(...(await db.pool.anyFirst(sql.type(z.object({ row: z.string() }))`SELECT t::text AS row FROM ${sql.identifier([table])} t`)));
  }
  return dumps.join('\n');
}

describe('personal access tokens', () => {
  it('stores only a hash: the raw token appears nowhere in the database', async () => {
    const { token } = await accountWithToken(db.pool);
    const dump = await databaseText();
    expect(dump.length).toBeGreaterThan(0);
    expect(dump).not.toContain(token);
    expect(dump).not.toContain(token.slice('hnp_pat_'.length));
    expect(token).toMatch(/^hnp_pat_[A-Za-z0-9_-]{43}$/);
  });

  it('accepts a live token and records when it was last used', async () => {
    const { token, tokenId, account } = await accountWithToken(db.pool, 'developer_agent');
    const res = await me(bearer(token));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ account: { id: account.id, plan: 'developer_agent' }, tokenId, entitlements: { rest: true, mcp: true, automation: true } });
    const lastUsed = await db.pool.oneFirst(sql.type(z.object({ last_used_at: z.string().nullable() }))`SELECT last_used_at FROM access_tokens WHERE id = ${tokenId}`);
    expect(lastUsed).not.toBeNull();
  });

  it('refuses a revoked token with 401 invalid_token and a Bearer challenge', async () => {
    const { token, tokenId } = await accountWithToken(db.pool);
    await revokeAccessToken(db.pool, tokenId);
    const res = await me(bearer(token));
    expect(res.statusCode).toBe(401);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.headers['www-authenticate']).toBe('Bearer realm="hnp", error="invalid_token"');
    expect(res.json()).toMatchObject({ code: 'invalid_token', status: 401 });
  });

  it('refuses the rotated-away token and accepts its replacement', async () => {
    const { token, tokenId } = await accountWithToken(db.pool);
    const rotated = await rotateAccessToken(db.pool, tokenId);
    expect(rotated.token).not.toBe(token);
    expect((await me(bearer(token))).json()).toMatchObject({ code: 'invalid_token' });
    expect((await me(bearer(rotated.token))).statusCode).toBe(200);
    await expect(rotateAccessToken(db.pool, tokenId)).rejects.toMatchObject({ code: 'conflict' });
  });

  it('refuses an expired token', async () => {
    const { account } = await accountWithToken(db.pool);
    const expired = await issueAccessToken(db.pool, { accountId: account.id, name: 'old', expiresAt: '2020-01-01T00:00:00Z' });
    expect((await me(bearer(expired.token))).statusCode).toBe(401);
  });

  it.each([
    ['no header', {}, 'authentication_required'],
    ['a non-bearer scheme', { authorization: 'Basic dXNlcjpwYXNz' }, 'authentication_required'],
    ['a malformed token', { authorization: 'Bearer not-a-token' }, 'invalid_token'],
    ['a well-formed unknown token', { authorization: `Bearer hnp_pat_${'A'.repeat(43)}` }, 'invalid_token'],
  ])('answers 401 for %s', async (_label, headers, code) => {
    const res = await me(headers);
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="hnp"/);
    expect(res.json()).toMatchObject({ code });
  });
});

describe('account status and plan entitlement (read on every request)', () => {
  it('refuses an inactive account with 403 account_inactive, and accepts it again once reactivated', async () => {
    const { token, account } = await accountWithToken(db.pool, 'team');
    for (const status of ['suspended', 'closed'] as const) {
      await updateAccount(db.pool, account.id, { status });
      const res = await me(bearer(token));
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ code: 'account_inactive' });
    }
    await updateAccount(db.pool, account.id, { status: 'active' });
    expect((await me(bearer(token))).statusCode).toBe(200);
  });

  it.each(['premium', 'professional'] as const)('refuses a %s token where the Developer entitlement is required', async (plan) => {
    const { token } = await accountWithToken(db.pool, plan);
    const res = await me(bearer(token));
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 'entitlement_required', plan, requiredPlans: ['developer_agent', 'team'] });
  });

  it.each(['team', 'developer_agent'] as const)('lets a %s token through', async (plan) => {
    const { token } = await accountWithToken(db.pool, plan);
    expect((await me(bearer(token))).statusCode).toBe(200);
  });

  it('applies a plan change to the very next request', async () => {
    const { token, account } = await accountWithToken(db.pool, 'team');
    expect((await me(bearer(token))).statusCode).toBe(200);
    await updateAccount(db.pool, account.id, { plan: 'premium' });
    expect((await me(bearer(token))).json()).toMatchObject({ code: 'entitlement_required' });
  });
});
