// A note looked up by its path goes through the primary key (vault_id, path), never through path
// search's trigram index (decision 110, migration 0027). pg_trgm's GIN operator class answers `=`
// as well, and its cost estimate undercut the primary key: after an ANALYZE the hot read's generic
// plan fetched its note through the trigram index (3 ms and ~300 buffers instead of 0.01 ms and 4 on
// a 54,000-note table; the REST read fell to 0.09x its baseline in the benchmark), and the substring
// indexer's join took 5 s a batch. Which plan wins depends on the table's size and spread over
// vaults (a small test table kept the primary key either way), so what is held here is the cause:
// no index but a btree can answer `path = …` at all. Path search, now on lower(path), still
// answers as ILIKE did on this C-collated column.
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAccount } from '../domain/identity/accounts.ts';
import { searchNotes } from '../domain/notes/discovery.ts';
import { applyTransaction } from '../domain/notes/knowledge.ts';
import { useTestDatabase } from './support/harness.ts';
import { personalMapping } from './support/fixtures.ts';

const db = useTestDatabase();

/** Notes at `paths` in a new vault of a new account, written through the knowledge core. */
async function vaultWithNotes(paths: readonly string[]): Promise<string> {
  const account = await createAccount(db.pool, { email: `${randomUUID()}@example.test`, displayName: 'Paths', plan: 'developer_agent' });
  const { vaultId, mappingId } = await personalMapping(db.pool, account.id);
  const actions = paths.map((path) => ({ type: 'write-note' as const, path, content: `# ${path}\n` }));
  const provenance = { actor: { type: 'account' as const, id: account.id }, source: 'ops' as const, requestId: null, idempotencyKey: null };
  const result = await applyTransaction(db.pool, { vaultId, mappingId }, actions, provenance, { accountId: account.id, route: 'test:paths', scope: mappingId, key: randomUUID(), fingerprint: randomUUID() });
  expect(result.status).toBe(200);
  return vaultId;
}
const pathHits = async (vaultId: string, query: string) =>
  (await searchNotes(db.pool, vaultId, { query })).results.filter((r) => r.matchedBy.includes('path')).map((r) => r.path);

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

  it('path search folds ASCII letters and keeps others as written, as ILIKE on the C-collated path does', async () => {
    const vaultId = await vaultWithNotes([...Array.from({ length: 50 }, (_, n) => `Folder ${n % 5}/Note ${String(n).padStart(3, '0')}.md`), 'Équipe/Été 2026.md']);
    expect(await pathHits(vaultId, 'fOLDER 2/nOTE 04')).toEqual(['Folder 2/Note 042.md', 'Folder 2/Note 047.md']);
    // The pattern is lowered under "C" like the path: lowered under the database's collation it
    // would read 'été' and miss the path's 'Été'.
    expect(await pathHits(vaultId, 'Été 2026')).toEqual(['Équipe/Été 2026.md']);
    expect(await pathHits(vaultId, 'éTÉ 2026')).toEqual([]);
  });
});
