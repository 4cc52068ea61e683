// Group commit (domain/notes/group-commit.ts): single-note writes of one vault that arrive together
// share a transaction, and each answers what it would have answered alone. Rows written by one
// transaction share its xmin, which is how these tests see the sharing.
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { emptyRow } from '../db/row-schemas.ts';
import type { TestDatabase } from './support/database.ts';
import type { DevClient } from './support/dev-client.ts';
import { personalMapping } from './support/fixtures.ts';
import { useCaller } from './support/harness.ts';

let db: TestDatabase;
let api: DevClient;
let accountId: string;

const caller = useCaller({ plan: 'team', mapping: false });
beforeAll(() => ({ db, api, accountId } = caller));

/** How many transactions wrote the vault's live notes. */
const writingTransactions = (vaultId: string) =>
  db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(DISTINCT xmin::text)::int AS n FROM notes WHERE vault_id = ${vaultId}`);

type Event = { id: string; path: string; beforeRevision: string | null; afterRevision: string };

describe('single-note writes of one vault share transactions when they arrive together', () => {
  it('32 concurrent creates: every one 201 with its own event, in fewer transactions than writes', async () => {
    const { mappingId, vaultId } = await personalMapping(db.pool, accountId);
    const answers = await Promise.all(Array.from({ length: 32 }, (_, i) => api.apply({ mappingId, path: `Group/N${i}.md`, content: `note ${i}` })));
    expect(answers.map((a) => a.statusCode)).toEqual(Array(32).fill(201));
    expect(new Set(answers.map((a) => a.data.eventId)).size).toBe(32);
    const events = (await api.events(mappingId, '&limit=1000')).data.events as Event[];
    expect(events.map((e) => Number(e.id))).toEqual(Array.from({ length: 32 }, (_, i) => i + 1));
    expect(await writingTransactions(vaultId)).toBeLessThan(32);
  });

  it('each write in a shared transaction answers as it would alone: stale revisions, case collisions, no-ops, repeated keys, a chain of replaces', async () => {
    const { mappingId, vaultId } = await personalMapping(db.pool, accountId);
    const base = await api.apply({ mappingId, path: 'Mix/Base.md', content: 'base' });
    const baseRevision = base.data.afterRevision as string;
    await api.apply({ mappingId, path: 'Mix/Same.md', content: 'same' });
    const key = randomUUID();
    const burst = await Promise.all([
      ...Array.from({ length: 10 }, (_, i) => api.apply({ mappingId, path: 'Mix/Base.md', content: `chain ${i}` }, { 'if-match': '*' })),
      api.apply({ mappingId, path: 'Mix/Base.md', content: 'stale', expectedHash: `sha256:${'0'.repeat(64)}` }),
      api.apply({ mappingId, path: 'mix/BASE.md', content: 'case' }),
      api.apply({ mappingId, path: 'Mix/Same.md', content: 'same' }, { 'if-match': '*' }),
      api.apply({ mappingId, path: 'Mix/Keyed.md', content: 'once' }, {}, key),
      api.apply({ mappingId, path: 'Mix/Keyed.md', content: 'once' }, {}, key),
      api.apply({ mappingId, path: 'Mix/Keyed.md', content: 'other body' }, {}, key),
    ]);
    const [chain, [stale, caseCollision, noop, ...keyed]] = [burst.slice(0, 10), burst.slice(10)];
    expect(chain.map((a) => a.statusCode)).toEqual(Array(10).fill(200));
    expect(stale!.statusCode).toBe(409);
    expect(stale!.data.code).toBe('revision_conflict');
    expect(caseCollision!.data.code).toBe('path_case_conflict');
    expect(noop!.statusCode).toBe(200);
    expect(noop!.data).toMatchObject({ operation: 'noop', eventId: null });
    // One key: one write; the others replay it, are in flight, or (another body) are refused.
    expect(keyed.filter((a) => a.statusCode === 201 && a.headers['idempotent-replayed'] !== 'true')).toHaveLength(1);
    for (const a of keyed.filter((a) => a.statusCode !== 201)) expect(['idempotency_in_flight', 'idempotency_key_reused']).toContain(a.data.code);
    // The replaces chain: each started from the revision the one before it wrote.
    const events = (await api.events(mappingId, '&limit=1000')).data.events as Event[];
    const onBase = events.filter((e) => e.path === 'Mix/Base.md');
    expect(onBase).toHaveLength(11);
    expect(onBase[1]!.beforeRevision).toBe(baseRevision);
    for (let i = 1; i < onBase.length; i++) expect(onBase[i]!.beforeRevision).toBe(onBase[i - 1]!.afterRevision);
    expect((await api.read(mappingId, 'Mix/Base.md')).data.revision).toBe(onBase.at(-1)!.afterRevision);
    expect(events.map((e) => Number(e.id))).toEqual(events.map((_, i) => i + 1));
    expect(await writingTransactions(vaultId)).toBeLessThan(4 + 10);
  });

  it('a write that fails its shared transaction fails alone: the others run again without it and succeed', async () => {
    const { mappingId, vaultId } = await personalMapping(db.pool, accountId);
    // A database-level failure of one write (not a precondition): a trigger refusing its path.
    await db.pool.query(sql.type(emptyRow)`
      CREATE FUNCTION test_refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.path = 'Poison/Bad.md' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$`);
    await db.pool.query(sql.type(emptyRow)`CREATE TRIGGER test_refuse_poison BEFORE INSERT ON notes FOR EACH ROW EXECUTE FUNCTION test_refuse_poison()`);
    try {
      const answers = await Promise.all([
        ...Array.from({ length: 8 }, (_, i) => api.apply({ mappingId, path: `Poison/Good ${i}.md`, content: `good ${i}` })),
        api.apply({ mappingId, path: 'Poison/Bad.md', content: 'bad' }),
        ...Array.from({ length: 8 }, (_, i) => api.apply({ mappingId, path: `Poison/Good ${8 + i}.md`, content: `good ${8 + i}` })),
      ]);
      expect(answers.filter((a) => a.statusCode === 201)).toHaveLength(16);
      expect(answers[8]!.statusCode).toBe(500);
      const events = (await api.events(mappingId, '&limit=1000')).data.events as Event[];
      expect(events.map((e) => e.path).sort()).toEqual(Array.from({ length: 16 }, (_, i) => `Poison/Good ${i}.md`).sort());
      expect(events.map((e) => Number(e.id))).toEqual(events.map((_, i) => i + 1));
      expect(await writingTransactions(vaultId)).toBeGreaterThan(0);
    } finally {
      await db.pool.query(sql.type(emptyRow)`DROP TRIGGER test_refuse_poison ON notes`);
      await db.pool.query(sql.type(emptyRow)`DROP FUNCTION test_refuse_poison()`);
    }
  });
});
