// Migration 0030 (decision 114) on a database holding notes and substring entries from before it:
// going down restores the word index on notes; coming up again gives every entry at its note's
// revision that note's vector, leaves an entry of another revision (its note is queued) empty until
// the indexer rewrites it, and drops the index on notes. Migration 0031 (decision 137), taken down
// and up with it, moves the word and trigram indexes into one with the vault. Real Postgres,
// node-pg-migrate as the platform runs it.
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { runner } from 'node-pg-migrate';
import { sql } from 'slonik';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { migrate, migrationsDir } from '../db/migrate.ts';
import { emptyRow } from '../db/row-schemas.ts';
import { createAccount } from '../domain/identity/accounts.ts';
import { createVault } from '../domain/identity/vaults.ts';
import { searchNotes } from '../domain/notes/discovery.ts';
import { indexAllQueuedNotes, queuedNoteCount } from '../domain/notes/substring-index.ts';
import { useTestDatabase } from './support/harness.ts';

const db = useTestDatabase();

const indexesOn = (table: string) =>
  db.pool.anyFirst(sql.type(z.object({ name: z.string() }))`SELECT indexname AS name FROM pg_indexes WHERE tablename = ${table} AND indexdef ~ '[(,] ?search[,)]' ORDER BY 1`);

describe('migration 0030: the word index after the write', () => {
  it('down restores the index on notes; up copies each current entry its vector, leaves a stale one to the indexer, and moves the index', async () => {
    // Down to 0029: 0030 and every migration after it (later ones come and go with it).
    const since0030 = readdirSync(migrationsDir).filter((f) => f.endsWith('.sql') && f >= '0030_').length;
    const applied = await runner({ databaseUrl: db.url, dir: migrationsDir, direction: 'down', count: since0030, migrationsTable: 'schema_migrations', singleTransaction: true, log: () => {} });
    expect(applied.map((m) => m.name).slice(-2)).toEqual(['0031_word_index_by_vault', '0030_word_index_after_commit']);
    expect(await indexesOn('notes')).toEqual(['notes_search_idx']);

    // As 0029 leaves a vault: two notes indexed at their revisions, one since changed (queued again).
    const account = await createAccount(db.pool, { email: `migration-${randomUUID()}@example.test`, displayName: 'M', plan: 'premium' });
    const vaultId = (await createVault(db.pool, { name: 'Before 0030', ownerAccountId: account.id })).id;
    await db.pool.query(sql.type(emptyRow)`
      INSERT INTO notes (vault_id, path, path_key, title, content, revision, size_bytes)
      SELECT ${vaultId}, p || '.md', lower(p) || '.md', p, c, 'sha256:' || encode(sha256(convert_to(c, 'UTF8')), 'hex'), octet_length(c)
        FROM (VALUES ('Kept', 'A heron on the lake'), ('Changed', 'A kingfisher now')) v(p, c)`);
    await db.pool.query(sql.type(emptyRow)`
      INSERT INTO note_substring_docs (vault_id, path, revision, content)
      SELECT vault_id, path, CASE WHEN path = 'Changed.md' THEN 'sha256:' || repeat('0', 64) ELSE revision END,
             CASE WHEN path = 'Changed.md' THEN 'A swallow before' ELSE content END FROM notes WHERE vault_id = ${vaultId}`);
    await db.pool.query(sql.type(emptyRow)`DELETE FROM note_substring_pending WHERE vault_id = ${vaultId} AND path = 'Kept.md'`);

    expect((await migrate(db.url)).slice(0, 2)).toEqual(['0030_word_index_after_commit', '0031_word_index_by_vault']);
    expect([await indexesOn('notes'), await indexesOn('note_substring_docs')]).toEqual([[], ['note_substring_docs_vault_idx']]);
    const vectors = () =>
      db.pool.any(sql.type(z.object({ path: z.string(), current: z.boolean(), empty: z.boolean() }))`
        SELECT d.path, d.search = n.search AS current, d.search = ''::tsvector AS empty
          FROM note_substring_docs d JOIN notes n USING (vault_id, path) WHERE d.vault_id = ${vaultId} ORDER BY d.path`);
    expect(await vectors()).toEqual([
      { path: 'Changed.md', current: false, empty: true },
      { path: 'Kept.md', current: true, empty: false },
    ]);
    // Found by their live words at once: one through the index, one queued.
    expect(await queuedNoteCount(db.pool, vaultId)).toBe(1);
    const found = async (query: string) => (await searchNotes(db.pool, vaultId, { query })).results.map((r) => r.path);
    expect([await found('heron'), await found('kingfisher'), await found('swallow')]).toEqual([['Kept.md'], ['Changed.md'], []]);
    await indexAllQueuedNotes(db.pool);
    expect((await vectors()).every((v) => v.current)).toBe(true);
    expect([await found('heron'), await found('kingfisher'), await found('swallow')]).toEqual([['Kept.md'], ['Changed.md'], []]);
  });
});
