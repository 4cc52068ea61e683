// Search's indexes kept after the writes: substring search's trigrams (decision 106, migration 0025)
// and ranked search's words (decision 114, migration 0030). Every change of a note's content or path
// is queued by a trigger, whoever writes it; a search is exact at once, by substring and by word,
// indexed or not; indexing empties the queue into the indexed table, with the note's content and
// word vector; a write that commits while its note's batch is being indexed queues it again;
// several indexers share the queue; and a vault's deletion takes its entries with it. Real Postgres.
import { AsyncResource } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { emptyRow } from '../db/row-schemas.ts';
import { createAccount } from '../domain/identity/accounts.ts';
import { createMapping, createVault } from '../domain/identity/vaults.ts';
import { searchNotes } from '../domain/notes/discovery.ts';
import { applyWrite } from '../domain/notes/knowledge.ts';
import { indexAllQueuedNotes, indexQueuedNotes, queuedNoteCount } from '../domain/notes/substring-index.ts';
import { useTestDatabase } from './support/harness.ts';

const db = useTestDatabase();
let vaultId: string;
let mappingId: string;
let accountId: string;

/** Creates the note, or replaces it (naming the revision it replaces). */
const write = async (path: string, content: string) =>
  applyWrite(db.pool, { vaultId, mappingId }, { path, content, expectedHash: (await currentRevision(path)) ?? undefined }, { actor: { type: 'account', id: accountId }, source: 'rest', requestId: null, idempotencyKey: null }, {
    accountId,
    route: 'test:substring',
    scope: mappingId,
    key: randomUUID(),
    fingerprint: randomUUID(),
  });
const foundBy = (kind: 'substring' | 'words') => async (query: string) =>
  (await searchNotes(db.pool, vaultId, { query })).results.filter((r) => r.matchedBy.includes(kind)).map((r) => r.path).sort();
const found = foundBy('substring');
const foundByWords = foundBy('words');
/** Entries whose word vector is not their note's as it is now (none, once the queue is empty). */
const staleVectors = () =>
  db.pool.oneFirst(sql.type(z.object({ count: z.number() }))`
    SELECT count(*)::int AS count FROM note_substring_docs d JOIN notes n USING (vault_id, path) WHERE d.vault_id = ${vaultId} AND d.search IS DISTINCT FROM n.search`);
const indexed = () =>
  db.pool.any(sql.type(z.object({ path: z.string(), revision: z.string() }))`SELECT path, revision FROM note_substring_docs WHERE vault_id = ${vaultId} ORDER BY path`);
const currentRevision = (path: string) =>
  db.pool.maybeOneFirst(sql.type(z.object({ revision: z.string() }))`SELECT revision FROM notes WHERE vault_id = ${vaultId} AND path = ${path}`);
const revisionOf = (path: string) => db.pool.oneFirst(sql.type(z.object({ revision: z.string() }))`SELECT revision FROM notes WHERE vault_id = ${vaultId} AND path = ${path}`);

beforeEach(async () => {
  accountId = (await createAccount(db.pool, { email: `substring-${randomUUID()}@example.test`, displayName: 'S', plan: 'developer_agent' })).id;
  vaultId = (await createVault(db.pool, { name: 'Substrings', ownerAccountId: accountId })).id;
  mappingId = (await createMapping(db.pool, { vaultId })).mappingId;
});

describe('the substring index after the writes', () => {
  it('finds a note by a substring of its content and by its words at once, queued; after indexing, through the indexes, with the queue empty', async () => {
    await write('Refs/One.md', '# One\n\nTicket ZX-9041 is open.\n');
    expect(await queuedNoteCount(db.pool, vaultId)).toBe(1);
    expect(await indexed()).toEqual([]);
    expect([await found('ZX-9041'), await foundByWords('ticket')]).toEqual([['Refs/One.md'], ['Refs/One.md']]);
    await indexAllQueuedNotes(db.pool, 100);
    expect(await queuedNoteCount(db.pool, vaultId)).toBe(0);
    expect(await indexed()).toEqual([{ path: 'Refs/One.md', revision: await revisionOf('Refs/One.md') }]);
    // The entry holds the note's word vector as its write computed it.
    expect(await staleVectors()).toBe(0);
    // The round merged its trigram and word entries into the index (none left pending: the merge finds no page).
    for (const index of ['note_substring_docs_vault_idx']) {
      expect(await db.pool.oneFirst(sql.type(z.object({ pages: z.number() }))`SELECT gin_clean_pending_list(${index}::regclass)::int AS pages`)).toBe(0);
    }
    expect([await found('ZX-9041'), await foundByWords('ticket')]).toEqual([['Refs/One.md'], ['Refs/One.md']]);
  });

  it('a changed note is found by its new content and words and not its old, before and after indexing', async () => {
    await write('Refs/Two.md', 'Alpha QK-1000\n');
    await indexAllQueuedNotes(db.pool, 100);
    await write('Refs/Two.md', 'Beta QK-2000\n');
    expect(await queuedNoteCount(db.pool, vaultId)).toBe(1);
    // The index still holds the old content and words: the queued note is read live instead.
    expect(await staleVectors()).toBe(1);
    expect([await found('QK-1000'), await found('QK-2000')]).toEqual([[], ['Refs/Two.md']]);
    expect([await foundByWords('alpha'), await foundByWords('beta')]).toEqual([[], ['Refs/Two.md']]);
    await indexAllQueuedNotes(db.pool, 100);
    expect(await staleVectors()).toBe(0);
    expect([await found('QK-1000'), await found('QK-2000')]).toEqual([[], ['Refs/Two.md']]);
    expect([await foundByWords('alpha'), await foundByWords('beta')]).toEqual([[], ['Refs/Two.md']]);
  });

  it('a moved note is found at its new path only, and a deleted one not at all; their entries go', async () => {
    await write('Refs/Moved.md', 'Gamma MV-77\n');
    await write('Refs/Gone.md', 'Delta GN-88\n');
    await indexAllQueuedNotes(db.pool, 100);
    await db.pool.query(sql.type(emptyRow)`UPDATE notes SET path = 'Elsewhere/Moved.md', path_key = 'elsewhere/moved.md' WHERE vault_id = ${vaultId} AND path = 'Refs/Moved.md'`);
    await db.pool.query(sql.type(emptyRow)`DELETE FROM notes WHERE vault_id = ${vaultId} AND path = 'Refs/Gone.md'`);
    expect([await found('MV-77'), await found('GN-88')]).toEqual([['Elsewhere/Moved.md'], []]);
    expect([await foundByWords('gamma'), await foundByWords('delta')]).toEqual([['Elsewhere/Moved.md'], []]);
    await indexAllQueuedNotes(db.pool, 100);
    expect((await indexed()).map((d) => d.path)).toEqual(['Elsewhere/Moved.md']);
    expect([await found('MV-77'), await found('GN-88')]).toEqual([['Elsewhere/Moved.md'], []]);
    expect([await foundByWords('gamma'), await foundByWords('delta')]).toEqual([['Elsewhere/Moved.md'], []]);
  });

  it('a write that commits while its note is being indexed queues it again, and its content is found', async () => {
    await write('Refs/Race.md', 'Old RC-1\n');
    let writer: Promise<unknown> | null = null;
    let blocked = false;
    // The writer is another request: it runs outside the indexer's transaction (slonik refuses the
    // pool inside a transaction's async context).
    const outside = AsyncResource.bind(<T>(fn: () => T): T => fn());
    await indexQueuedNotes(db.pool, 100, async () => {
      // The batch is taken (its queue row deleted, uncommitted): a writer now waits for it.
      writer = outside(() => write('Refs/Race.md', 'New RC-2\n'));
      blocked = await Promise.race([writer.then(() => false), new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 300))]);
    });
    await writer;
    expect(blocked).toBe(true);
    // The index holds the content read before the write; the note is queued again for the new one.
    expect(await queuedNoteCount(db.pool, vaultId)).toBe(1);
    expect([await found('RC-1'), await found('RC-2')]).toEqual([[], ['Refs/Race.md']]);
    expect([await foundByWords('old'), await foundByWords('new')]).toEqual([[], ['Refs/Race.md']]);
    await indexAllQueuedNotes(db.pool, 100);
    expect(await indexed()).toEqual([{ path: 'Refs/Race.md', revision: await revisionOf('Refs/Race.md') }]);
    expect(await staleVectors()).toBe(0);
    expect([await foundByWords('old'), await foundByWords('new')]).toEqual([[], ['Refs/Race.md']]);
  });

  it('two indexers at once share the queue: every note indexed once, nothing left', async () => {
    await db.pool.query(sql.type(emptyRow)`
      INSERT INTO notes (vault_id, path, path_key, title, content, revision, size_bytes)
      SELECT ${vaultId}, 'Bulk/N' || i || '.md', 'bulk/n' || i || '.md', 'N' || i, 'Bulk note BK-' || i,
             'sha256:' || encode(sha256(convert_to('Bulk note BK-' || i, 'UTF8')), 'hex'), 12
        FROM generate_series(1, 600) i`);
    expect(await queuedNoteCount(db.pool, vaultId)).toBe(600);
    const queued = await queuedNoteCount(db.pool); // every vault's, as the indexers see the queue
    const rounds = await Promise.all([indexQueuedNotes(db.pool, 200), indexQueuedNotes(db.pool, 200), indexQueuedNotes(db.pool, 200), indexQueuedNotes(db.pool, 200)]);
    // Each queued note taken by one indexer only.
    expect(rounds.reduce((sum, r) => sum + r.taken, 0)).toBeLessThanOrEqual(queued);
    await indexAllQueuedNotes(db.pool, 100);
    expect(await queuedNoteCount(db.pool, vaultId)).toBe(0);
    expect((await indexed()).length).toBe(600);
    expect(await found('BK-599')).toEqual(['Bulk/N599.md']);
  });

  it("a vault's deletion takes its queue and its index entries", async () => {
    await write('Refs/A.md', 'AA-1\n');
    await indexAllQueuedNotes(db.pool, 100);
    await write('Refs/B.md', 'BB-2\n');
    await db.pool.query(sql.type(emptyRow)`DELETE FROM vaults WHERE id = ${vaultId}`);
    expect(await queuedNoteCount(db.pool, vaultId)).toBe(0);
    expect(await indexed()).toEqual([]);
  });
});
