// A note looked up by its path goes through the primary key (vault_id, path), never through path
// search's trigram index (decision 110, migration 0027). pg_trgm's GIN operator class answers `=`
// as well, and its cost estimate undercut the primary key: after an ANALYZE the hot read's generic
// plan fetched its note through the trigram index (3 ms and ~300 buffers instead of 0.05 ms and 4 on
// a 54,000-note table; the REST read fell to 0.09x its baseline in the benchmark), and the substring
// indexer's join took 5 s a batch. Which plan wins depends on the table's size and spread over
// vaults (a small test table kept the primary key either way), so what is held here is the cause:
// no index but a btree can answer `path = …` at all.
import { sql } from 'slonik';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { emptyRow } from '../db/row-schemas.ts';
import { searchNotes } from '../domain/notes/discovery.ts';
import { useTestDatabase } from './support/harness.ts';
import { accountWithToken, personalMapping } from './support/fixtures.ts';

const db = useTestDatabase();

/** `count` notes `Folder nn/Note nnnnn.md` in one vault, written in SQL: the write path is not under test. */
async function seedNotes(vaultId: string, count: number): Promise<void> {
  await db.pool.query(sql.type(emptyRow)`
    INSERT INTO notes (vault_id, path, path_key, basename_key, title, content, revision, size_bytes)
    SELECT ${vaultId}, p.path, lower(p.path), lower(p.name), p.name, '# ' || p.name, 'sha256:' || encode(sha256(convert_to(p.path, 'UTF8')), 'hex'), 10
      FROM (SELECT 'Folder ' || lpad((g % 50)::text, 2, '0') || '/Note ' || lpad(g::text, 5, '0') || '.md' AS path,
                   'Note ' || lpad(g::text, 5, '0') AS name
              FROM generate_series(1, ${count}::int) g) p`);
}

describe('look-ups of a note by path', () => {
  it('no index of notes but a btree can answer path equality', async () => {
    // Every index of notes with `path` as a key column whose operator family has text `=`.
    const answering = await db.pool.anyFirst(sql.type(z.object({ index: z.string() }))`
      SELECT DISTINCT c.relname AS index
        FROM pg_index i
        JOIN pg_class c ON c.oid = i.indexrelid
        JOIN pg_am am ON am.oid = c.relam
        CROSS JOIN LATERAL unnest(i.indkey::int2[], i.indclass::oid[]) AS k(attnum, opclass)
        JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum AND a.attname = 'path'
        JOIN pg_opclass oc ON oc.oid = k.opclass
        JOIN pg_amop op ON op.amopfamily = oc.opcfamily AND op.amopopr = '=(text,text)'::regoperator
       WHERE i.indrelid = 'notes'::regclass AND am.amname <> 'btree'`);
    expect(answering).toEqual([]);
  });

  it('path search still matches any letter case, through the index on lower(path)', async () => {
    const { account } = await accountWithToken(db.pool);
    const { vaultId } = await personalMapping(db.pool, account.id);
    await seedNotes(vaultId, 300);
    const hits = await searchNotes(db.pool, vaultId, { query: 'fOLDER 07/nOTE 0020' });
    expect(hits.results.filter((r) => r.matchedBy.includes('path')).map((r) => r.path)).toEqual(['Folder 07/Note 00207.md']);
  });
});
