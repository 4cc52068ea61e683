// Concurrency of applies against real Postgres: one Idempotency-Key, racing revisions.
import { sql } from 'slonik';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { IDEMPOTENCY_RETENTION_HOURS, purgeExpiredIdempotencyRecords } from '../domain/idempotency.ts';
import { revisionOf } from '../domain/notes/markdown.ts';
import type { TestDatabase } from './support/database.ts';
import { useCaller } from './support/harness.ts';
import type { DevClient } from './support/dev-client.ts';
import { devClient } from './support/dev-client.ts';
import { accountWithToken, personalMapping } from './support/fixtures.ts';

let db: TestDatabase;
let api: DevClient;
let accountId: string;

const caller = useCaller({ plan: 'team', mapping: false });
beforeAll(() => ({ db, api, accountId } = caller));

const count = (table: 'notes' | 'note_events', vaultId: string) =>
  db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM ${sql.identifier([table])} WHERE vault_id = ${vaultId}`);

describe('one Idempotency-Key, 20 parallel applies', () => {
  it('writes once and records one event; the others replay or get 409; another payload gets 422', async () => {
    const { mappingId, vaultId } = await personalMapping(db.pool, accountId);
    const body = { mappingId, path: 'Race/Key.md', content: 'exactly once' };
    const results = await Promise.all(Array.from({ length: 20 }, () => api.apply(body, {}, 'same-key-20')));
    const statuses = results.map((r) => r.statusCode);
    const created = results.filter((r) => r.statusCode === 201 && r.headers['idempotent-replayed'] === undefined);
    const replays = results.filter((r) => r.headers['idempotent-replayed'] === 'true');
    const inFlight = results.filter((r) => r.statusCode === 409);
    expect(created).toHaveLength(1);
    expect(replays.length + inFlight.length).toBe(19);
    for (const r of inFlight) {
      expect(r.data.code).toBe('idempotency_in_flight');
      expect(r.headers['retry-after']).toBe('1');
    }
    for (const r of replays) {
      expect(r.statusCode).toBe(201);
      expect(r.data).toEqual(created[0]!.data);
      expect(r.headers['etag']).toBe(created[0]!.headers['etag']);
    }
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    expect(await count('notes', vaultId)).toBe(1);
    expect(await count('note_events', vaultId)).toBe(1);

    // Once settled, a retry replays the stored status, body and ETag.
    const retry = await api.apply(body, {}, 'same-key-20');
    expect(retry.statusCode).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.data).toEqual(created[0]!.data);

    const otherPayload = await api.apply({ ...body, content: 'something else' }, {}, 'same-key-20');
    expect(otherPayload.statusCode).toBe(422);
    expect(otherPayload.data.code).toBe('idempotency_key_reused');
    // The same key on another mapping is a different scope.
    const { mappingId: otherMapping } = await personalMapping(db.pool, accountId);
    expect((await api.apply({ ...body, mappingId: otherMapping }, {}, 'same-key-20')).statusCode).toBe(201);
  });

  it('does not store a failed apply: the same key may be retried after fixing the cause', async () => {
    const { mappingId } = await personalMapping(db.pool, accountId);
    await api.apply({ mappingId, path: 'Race/Retry.md', content: 'v1' });
    const stale = await api.apply({ mappingId, path: 'Race/Retry.md', content: 'v2', expectedHash: revisionOf('v0') }, {}, 'retry-key');
    expect(stale.statusCode).toBe(409);
    const again = await api.apply({ mappingId, path: 'Race/Retry.md', content: 'v2', expectedHash: revisionOf('v0') }, {}, 'retry-key');
    expect(again.statusCode).toBe(409);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
  });
});

describe('idempotency retention', () => {
  it('replays for 24 hours; an expired record no longer binds the key and is purged', async () => {
    const { mappingId } = await personalMapping(db.pool, accountId);
    await api.apply({ mappingId, path: 'Retention/A.md', content: 'a' }, {}, 'retained');
    const expiresIn = await db.pool.oneFirst(sql.type(z.object({ hours: z.number() }))`
      SELECT round(extract(epoch FROM expires_at - created_at) / 3600)::int AS hours FROM idempotency_records WHERE key = 'retained'`);
    expect(expiresIn).toBe(IDEMPOTENCY_RETENTION_HOURS);
    await db.pool.query(sql.type(z.object({}))`UPDATE idempotency_records SET expires_at = now() - interval '1 second' WHERE key = 'retained'`);
    const reused = await api.apply({ mappingId, path: 'Retention/B.md', content: 'b' }, {}, 'retained');
    expect(reused.statusCode).toBe(201);
    expect(reused.headers['idempotent-replayed']).toBeUndefined();
    await db.pool.query(sql.type(z.object({}))`UPDATE idempotency_records SET expires_at = now() - interval '1 second' WHERE key = 'retained'`);
    expect(await purgeExpiredIdempotencyRecords(db.pool)).toBeGreaterThanOrEqual(1);
    expect(await db.pool.exists(sql.type(z.object({ key: z.string() }))`SELECT key FROM idempotency_records WHERE key = 'retained'`)).toBe(false);
  });
});

describe('racing revisions', () => {
  it('20 parallel replaces with the same expectedHash: exactly one succeeds, the rest get 409 with the new revision', async () => {
    const { mappingId, vaultId } = await personalMapping(db.pool, accountId);
    await api.apply({ mappingId, path: 'Race/Rev.md', content: 'base' });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => api.apply({ mappingId, path: 'Race/Rev.md', content: `writer ${i}`, expectedHash: revisionOf('base') })),
    );
    const winners = results.filter((r) => r.statusCode === 200);
    const losers = results.filter((r) => r.statusCode === 409);
    expect(winners).toHaveLength(1);
    expect(losers).toHaveLength(19);
    const winningRevision = winners[0]!.data.afterRevision;
    for (const r of losers) expect(r.data).toMatchObject({ code: 'revision_conflict', currentRevision: winningRevision });
    expect(await count('note_events', vaultId)).toBe(2);
    const final = await api.read(mappingId, 'Race/Rev.md');
    expect(final.data.revision).toBe(winningRevision);
  });

  it('20 parallel If-Match: * replaces all apply, one after another: every event starts from the previous one', async () => {
    const { mappingId } = await personalMapping(db.pool, accountId);
    await api.apply({ mappingId, path: 'Race/Star.md', content: 'base' });
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => api.apply({ mappingId, path: 'Race/Star.md', content: `star ${i}` }, { 'if-match': '*' })));
    expect(results.map((r) => r.statusCode)).toEqual(Array(20).fill(200));
    const events = (await api.events(mappingId, '')).data.events as Array<{ beforeRevision: string | null; afterRevision: string }>;
    expect(events).toHaveLength(21);
    // No lost update: each replace saw the revision the one before it wrote.
    for (let i = 1; i < events.length; i++) expect(events[i]!.beforeRevision).toBe(events[i - 1]!.afterRevision);
    expect((await api.read(mappingId, 'Race/Star.md')).data.revision).toBe(events[20]!.afterRevision);
  });

  it('20 parallel creates of one new path (different keys): one creates, the rest need a revision', async () => {
    const { mappingId, vaultId } = await personalMapping(db.pool, accountId);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => api.apply({ mappingId, path: 'Race/New.md', content: `creator ${i}` })));
    expect(results.filter((r) => r.statusCode === 201)).toHaveLength(1);
    expect(results.filter((r) => r.statusCode === 428 && r.data.code === 'revision_required')).toHaveLength(19);
    expect(await count('notes', vaultId)).toBe(1);
  });

  it('20 parallel creates of two paths that differ only by case: one note; the rest need a revision or are refused for the case', async () => {
    const { mappingId, vaultId } = await personalMapping(db.pool, accountId);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => api.apply({ mappingId, path: i % 2 === 0 ? 'Race/Case.md' : 'race/CASE.md', content: `creator ${i}` })),
    );
    expect(results.filter((r) => r.statusCode === 201)).toHaveLength(1);
    for (const r of results.filter((r) => r.statusCode !== 201)) expect(['revision_required', 'path_case_conflict']).toContain(r.data.code);
    expect(await count('notes', vaultId)).toBe(1);
    expect(await count('note_events', vaultId)).toBe(1);
  });

  it('single writes race transactions over the same notes: no deadlock, no lost update, every path\'s events chain', async () => {
    // Single-note writes share group-committed transactions (domain/notes/group-commit.ts); a
    // transaction of many notes holds the whole vault from its start. Both take the vault lock.
    const { mappingId } = await personalMapping(db.pool, accountId);
    const paths = ['Mix/A.md', 'Mix/B.md', 'Mix/C.md'];
    for (const path of paths) await api.apply({ mappingId, path, content: `${path} base` });
    const singles = Array.from({ length: 30 }, (_, i) => api.apply({ mappingId, path: paths[i % 3]!, content: `single ${i}` }, { 'if-match': '*' }));
    const transactions = Array.from({ length: 10 }, async (_, i) => {
      const current = await Promise.all(paths.map((path) => api.read(mappingId, path)));
      const actions = paths.map((path, j) => ({ type: 'write-note', path, content: `transaction ${i} ${path}`, expectedHash: current[j]!.data.revision as string }));
      return api.transaction({ mappingId, dryRun: false, actions }, `mix-${i}-${mappingId}`);
    });
    const singleAnswers = await Promise.all(singles);
    const transactionAnswers = await Promise.all(transactions);
    expect(singleAnswers.map((r) => r.statusCode)).toEqual(Array(30).fill(200));
    // A transaction whose read went stale is refused whole; none fails any other way.
    for (const r of transactionAnswers) {
      if (r.statusCode !== 200) expect(r.data.code, JSON.stringify(r.data)).toBe('revision_conflict');
    }
    const applied = transactionAnswers.filter((r) => r.statusCode === 200).length;
    const events = (await api.events(mappingId, '&limit=1000')).data.events as Array<{ id: string; path: string; beforeRevision: string | null; afterRevision: string }>;
    expect(events).toHaveLength(3 + 30 + 3 * applied);
    expect(events.map((e) => Number(e.id))).toEqual(events.map((_, i) => i + 1));
    for (const path of paths) {
      const chain = events.filter((e) => e.path === path);
      for (let i = 1; i < chain.length; i++) expect(chain[i]!.beforeRevision).toBe(chain[i - 1]!.afterRevision);
      expect((await api.read(mappingId, path)).data.revision).toBe(chain.at(-1)!.afterRevision);
    }
  });

  it('never lets a since-cursor skip an event while parallel writers commit', async () => {
    // An account of its own, so the reader's polls (it asks without pause) count against no other
    // test's allowance minute.
    const own = await accountWithToken(db.pool, 'team');
    const client = devClient(caller.app, own.token);
    const { mappingId } = await personalMapping(db.pool, own.account.id);
    const seen: string[] = [];
    let cursor: string | undefined;
    let writing = true;
    const reader = (async () => {
      // Poll the feed the way a sync client would, while the writes land. The reader stops at an
      // empty page asked for after every write was acknowledged: a page asked for before then may
      // be empty and answer after the last acknowledgement (its snapshot predates the writes), so
      // the flag is read when the page is asked for, not when it answers.
      while (writing || seen.length < 30) {
        const askedAfterWrites = !writing;
        const page = await client.events(mappingId, `${cursor ? `&since=${cursor}` : ''}&limit=7`);
        expect(page.statusCode, page.body).toBe(200);
        seen.push(...(page.data.events as Array<{ path: string }>).map((e) => e.path));
        cursor = page.data.nextCursor as string;
        if (askedAfterWrites && page.data.events.length === 0) break;
      }
    })();
    const applied = await Promise.all(Array.from({ length: 30 }, (_, i) => client.apply({ mappingId, path: `Order/N${i}.md`, content: `${i}` })));
    writing = false;
    // Every write was acknowledged, so every one of them must reach the reader.
    expect(applied.map((r) => r.statusCode)).toEqual(applied.map(() => 201));
    await reader;
    expect(seen).toHaveLength(30);
    expect(new Set(seen).size).toBe(30);
    const events = (await client.events(mappingId, '&limit=1000')).data.events as Array<{ id: string; occurredAt: string }>;
    const ids = events.map((e) => Number(e.id));
    expect(ids).toEqual(Array.from({ length: 30 }, (_, i) => i + 1)); // per vault, gap-free, commit order
    const times = events.map((e) => Date.parse(e.occurredAt));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
  });
});
