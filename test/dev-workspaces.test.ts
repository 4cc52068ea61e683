// GET /api/dev/workspaces: the caller's workspaces with role and permissions, paginated by opaque
// cursors, and never anyone else's.
import { sql } from 'slonik';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { addMember, builtinRoles, createRole, createWorkspace, removeMember } from '../domain/identity/workspaces.ts';
import type { TestDatabase } from './support/database.ts';
import { devClient } from './support/dev-client.ts';
import type { DevClient } from './support/dev-client.ts';
import { accountWithToken } from './support/fixtures.ts';
import { newCaller, useCaller } from './support/harness.ts';

const ctx = useCaller({ plan: 'developer_agent', mapping: false });
let db: TestDatabase;
let me: DevClient;
let meId: string;
let strangerId: string;
let strangerApi: DevClient;
const mine: Array<{ id: string; name: string; role: string }> = [];
const foreign: string[] = [];

type Page = { workspaces: Array<{ id: string; name: string; ownerAccountId: string; createdAt: string; role: string; permissions: string[] }>; nextCursor: string | null; hasMore: boolean };

beforeAll(async () => {
  ({ db, api: me, accountId: meId } = ctx);
  ({ api: strangerApi, accountId: strangerId } = await newCaller(ctx, { plan: 'team', mapping: false }));
  // Five workspaces the caller belongs to, with different roles (one custom), created in one
  // transaction so several share a creation instant; and three the caller has nothing to do with.
  await db.pool.transaction(async (tx) => {
    const owned = await createWorkspace(tx, { name: 'Mine (owner)', ownerAccountId: meId });
    mine.push({ id: owned.id, name: owned.name, role: 'owner' });
    for (const role of ['viewer', 'editor', 'reviewer']) {
      const ws = await createWorkspace(tx, { name: `Theirs, me ${role}`, ownerAccountId: strangerId });
      await addMember(tx, { workspaceId: ws.id, accountId: meId, role });
      mine.push({ id: ws.id, name: ws.name, role });
    }
    const custom = await createWorkspace(tx, { name: 'Custom role', ownerAccountId: strangerId });
    await createRole(tx, { workspaceId: custom.id, name: 'ingest-bot', permissions: ['automation.events.ingest'] });
    await addMember(tx, { workspaceId: custom.id, accountId: meId, role: 'ingest-bot' });
    mine.push({ id: custom.id, name: custom.name, role: 'ingest-bot' });
    for (let i = 0; i < 3; i++) foreign.push((await createWorkspace(tx, { name: `Stranger ${i}`, ownerAccountId: strangerId })).id);
  });
});

async function allPages(api: DevClient, limit: number): Promise<Page['workspaces']> {
  const seen: Page['workspaces'] = [];
  let cursor: string | null = null;
  for (let guard = 0; guard < 20; guard++) {
    const res = await api.request('GET', `/api/dev/workspaces?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
    expect(res.statusCode).toBe(200);
    const page = res.data as Page;
    expect(page.workspaces.length).toBeLessThanOrEqual(limit);
    seen.push(...page.workspaces);
    if (!page.hasMore) {
      expect(page.nextCursor).toBeNull();
      return seen;
    }
    cursor = page.nextCursor;
  }
  throw new Error('too many pages');
}

describe('GET /api/dev/workspaces', () => {
  it("lists the caller's workspaces with the caller's role and that role's permissions", async () => {
    const res = await me.request('GET', '/api/dev/workspaces');
    expect(res.statusCode).toBe(200);
    const page = res.data as Page;
    expect(page).toMatchObject({ hasMore: false, nextCursor: null });
    expect(page.workspaces.map((w) => w.id).sort()).toEqual(mine.map((w) => w.id).sort());
    for (const expected of mine) {
      const listed = page.workspaces.find((w) => w.id === expected.id)!;
      expect(listed).toMatchObject({ name: expected.name, role: expected.role, ownerAccountId: expect.any(String), createdAt: expect.any(String) });
      expect(listed.permissions).toEqual(expected.role === 'ingest-bot' ? ['automation.events.ingest'] : [...builtinRoles[expected.role]!]);
    }
    expect(res.headers['ratelimit-policy']).toEqual(expect.any(String));
  });

  it('pages through every workspace exactly once, also across rows created in the same instant', async () => {
    const sameInstant = await db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(DISTINCT created_at)::int AS n FROM workspaces WHERE id = ANY (${sql.array(mine.map((w) => w.id), 'uuid')})`);
    expect(sameInstant).toBe(1); // one transaction: one now()
    for (const limit of [1, 2, 3, 5]) {
      const seen = await allPages(me, limit);
      expect(seen.map((w) => w.id)).toEqual([...new Set(seen.map((w) => w.id))]);
      expect(seen.map((w) => w.id).sort()).toEqual(mine.map((w) => w.id).sort());
    }
  });

  it('continues after a workspace the caller left between two pages', async () => {
    const first = (await me.request('GET', '/api/dev/workspaces?limit=2')).data as Page;
    const left = first.workspaces[1]!;
    await removeMember(db.pool, { workspaceId: left.id, accountId: meId });
    try {
      const rest = (await me.request('GET', `/api/dev/workspaces?limit=10&cursor=${first.nextCursor}`)).data as Page;
      const seen = [...first.workspaces, ...rest.workspaces].map((w) => w.id);
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen.sort()).toEqual(mine.map((w) => w.id).sort());
    } finally {
      await addMember(db.pool, { workspaceId: left.id, accountId: meId, role: mine.find((w) => w.id === left.id)!.role });
    }
  });

  it('continues after the workspace a cursor points at was deleted between two pages', async () => {
    const doomed = await createWorkspace(db.pool, { name: 'Doomed', ownerAccountId: meId });
    const after = await createWorkspace(db.pool, { name: 'After', ownerAccountId: meId });
    const all = await allPages(me, 100);
    const index = all.findIndex((w) => w.id === doomed.id);
    const upTo = (await me.request('GET', `/api/dev/workspaces?limit=${index + 1}`)).data as Page;
    expect(upTo.workspaces.at(-1)!.id).toBe(doomed.id);
    await db.pool.query(sql.type(z.object({}))`DELETE FROM workspaces WHERE id = ${doomed.id}`);
    const rest = (await me.request('GET', `/api/dev/workspaces?limit=100&cursor=${upTo.nextCursor}`)).data as Page;
    expect(rest.workspaces.map((w) => w.id)).toEqual(all.slice(index + 1).map((w) => w.id));
    expect(rest.workspaces.map((w) => w.id)).toContain(after.id);
    await db.pool.query(sql.type(z.object({}))`DELETE FROM workspaces WHERE id = ${after.id}`);
  });

  it("never shows another account's workspaces, whatever cursor is sent", async () => {
    const listed = (await allPages(me, 2)).map((w) => w.id);
    for (const id of foreign) expect(listed).not.toContain(id);
    // A newcomer with no membership sees nothing, not even through a cursor taken from someone else.
    const newcomer = devClient(ctx.app, (await accountWithToken(db.pool, 'team')).token);
    const myCursor = ((await me.request('GET', '/api/dev/workspaces?limit=1')).data as Page).nextCursor!;
    for (const url of ['/api/dev/workspaces', `/api/dev/workspaces?cursor=${myCursor}`]) {
      const res = await newcomer.request('GET', url);
      expect(res.statusCode).toBe(200);
      expect(res.data).toEqual({ workspaces: [], nextCursor: null, hasMore: false });
    }
    // The other account sees its own (those it shares with the caller included), never the caller's own.
    const theirs = (await allPages(strangerApi, 3)).map((w) => w.id).sort();
    expect(theirs).toEqual([...mine.filter((w) => w.role !== 'owner').map((w) => w.id), ...foreign].sort());
    expect(theirs).not.toContain(mine.find((w) => w.role === 'owner')!.id);
  });

  it('validates limit and cursor, and needs a token', async () => {
    for (const query of ['limit=0', 'limit=101', 'limit=x', 'cursor=not-ours', 'extra=1']) {
      const res = await me.request('GET', `/api/dev/workspaces?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.data.code).toBe('invalid_request');
    }
    expect((await ctx.app.inject({ method: 'GET', url: '/api/dev/workspaces' })).statusCode).toBe(401);
  });
});
