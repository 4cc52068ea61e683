// A vault's search plan does not hinge on the statistics of the moment (issue 50, decision 137): a
// vault imported into a database whose statistics predate it (the planner's last ANALYZE saw other
// tenants only; autovacuum is off for these tables, as no automatic analyze comes for an import
// under a tenth of a large table) is searched through the word and trigram indexes for a rare word,
// not by walking every note of the vault. Before migration 0031 and the vault as a parameter, the
// same plan walked the vault's primary key and read each note (0.6-1 s on 5,000 prose notes). No
// timing here: the plan and the rows its scans return are checked; bench/mcp.ts measures the latency.
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { emptyRow } from '../db/row-schemas.ts';
import { createAccount } from '../domain/identity/accounts.ts';
import { createMapping, createVault } from '../domain/identity/vaults.ts';
import { explainSearch, searchLimits, searchNotes } from '../domain/notes/discovery.ts';
import type { SearchPlanNode } from '../domain/notes/discovery.ts';
import { indexAllQueuedNotes, queuedNoteCount } from '../domain/notes/substring-index.ts';
import { importVault } from '../domain/notes/vault-transfer.ts';
import { useTestDatabase } from './support/harness.ts';

const db = useTestDatabase();
const TENANTS = 8;
const TENANT_NOTES = 500;
const IMPORTED = 600;
let folder: string;
let vaultId: string;

/** Every node of a plan, each with the relationship to its parent (`Inner` for a nested loop's look-up). */
function nodes(plan: SearchPlanNode): SearchPlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

/** Prose-like notes: a reference each, "zygomorphic" in two of them, "project" in every one. */
function importedNote(n: number): string {
  const words = Array.from({ length: 120 }, (_, i) => `word${(n * 31 + i * 7) % 900}`).join(' ');
  return `# Imported ${n}\n\nReference REF-${n} for the project. ${n % 300 === 17 ? 'A zygomorphic flower. ' : ''}${words}\n`;
}

beforeAll(async () => {
  const account = await createAccount(db.pool, { email: `plans-${randomUUID()}@example.test`, displayName: 'Plans', plan: 'premium' });
  // Other tenants' notes, indexed and analyzed: the statistics the import will find. Some of them
  // have the rare word too, so the word index holds it for other vaults.
  for (let t = 0; t < TENANTS; t++) {
    const tenant = await createVault(db.pool, { name: `Tenant ${t}`, ownerAccountId: account.id });
    await db.pool.query(sql.type(emptyRow)`
      INSERT INTO notes (vault_id, path, path_key, title, content, revision, size_bytes)
      SELECT ${tenant.id}, p, lower(p), 'Note ' || i, c, 'sha256:' || encode(sha256(convert_to(c, 'UTF8')), 'hex'), octet_length(c)
        FROM generate_series(0, ${TENANT_NOTES - 1}) i,
             LATERAL (SELECT 'Notes/Note ' || i || '.md' AS p,
                             '# Note ' || i || E'\n\nA project note, reference REF-' || i || CASE WHEN i % 100 = 7 THEN ', zygomorphic' ELSE '' END || E'.\n' AS c) x`);
  }
  await indexAllQueuedNotes(db.pool);
  await db.pool.query(sql.type(emptyRow)`ALTER TABLE notes SET (autovacuum_enabled = false)`);
  await db.pool.query(sql.type(emptyRow)`ALTER TABLE note_substring_docs SET (autovacuum_enabled = false)`);
  await db.pool.query(sql.type(emptyRow)`ALTER TABLE note_substring_pending SET (autovacuum_enabled = false)`);
  await db.pool.query(sql.type(emptyRow)`ANALYZE notes, note_substring_docs, note_substring_pending`);

  // The vault arrives by a bulk import, and the indexer catches up; nothing analyzes it.
  const vault = await createVault(db.pool, { name: 'Imported', ownerAccountId: account.id });
  vaultId = vault.id;
  const { mappingId } = await createMapping(db.pool, { vaultId });
  folder = await mkdtemp(join(tmpdir(), 'hnp-search-plans-'));
  for (let n = 0; n < IMPORTED; n++) {
    const file = join(folder, `Area ${n % 6}`, `Note ${n}.md`);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, importedNote(n));
  }
  const report = await importVault(db.pool, { folder, mappingId, accountId: account.id });
  expect(report.notes.created).toBe(IMPORTED);
  await indexAllQueuedNotes(db.pool);
  expect(await queuedNoteCount(db.pool, vaultId)).toBe(0);
}, 120_000);

afterAll(async () => {
  if (folder) await rm(folder, { recursive: true, force: true });
});

describe('search right after a bulk import, with statistics that predate the vault', () => {
  it('the statistics do predate it: the planner still counts the rows of the last ANALYZE', async () => {
    const tables = await db.pool.any(sql.type(z.object({ table: z.string(), analyzed: z.number() }))`
      SELECT relname AS table, reltuples::int AS analyzed FROM pg_class WHERE relname IN ('notes', 'note_substring_docs') ORDER BY relname`);
    expect(tables).toEqual([
      { table: 'note_substring_docs', analyzed: TENANTS * TENANT_NOTES },
      { table: 'notes', analyzed: TENANTS * TENANT_NOTES },
    ]);
  });

  it('a rare word enters through the index of the vault with its words and trigrams', async () => {
    const plan = nodes(await explainSearch(db.pool, vaultId, { query: 'zygomorphic' }));
    // The words part and the substring part past its walk (migration 0031).
    const indexScans = plan.filter((n) => n['Node Type'] === 'Bitmap Index Scan' && n['Index Name'] === 'note_substring_docs_vault_idx');
    expect(indexScans.map((n) => String(n['Index Cond']))).toEqual([expect.stringContaining('search @@'), expect.stringContaining('content ~~*')]);
    // No scan of a whole table.
    expect(plan.filter((n) => n['Node Type'] === 'Seq Scan').map((n) => n['Relation Name'])).toEqual([]);
    const found = await searchNotes(db.pool, vaultId, { query: 'zygomorphic' });
    expect(found.results.map((r) => r.path).sort()).toEqual(['Area 5/Note 317.md', 'Area 5/Note 17.md'].sort());
  });

  it('a rare word, a rare substring, and words common in other vaults but absent here read a bounded number of rows', async () => {
    // Actual rows, not time: EXPLAIN ANALYZE counts what each scan returned. The vault has 600 notes;
    // a walk of all of them, or a check of each, returns hundreds. A substring's walk reads at most
    // substringProbe notes before the index.
    for (const query of ['zygomorphic', 'EF-423', 'a project note']) {
      const plan = nodes(await explainSearch(db.pool, vaultId, { query }, { analyze: true }));
      const scans = plan.filter((n) => /Scan$/.test(n['Node Type']) && ['notes', 'note_substring_docs'].includes(n['Relation Name'] ?? ''));
      const largest = Math.max(...scans.map((n) => Number(n['Actual Rows']) * Number(n['Actual Loops'])));
      const over = scans.filter((n) => Number(n['Actual Rows']) * Number(n['Actual Loops']) > searchLimits.substringProbe);
      expect({ query, largest: largest <= searchLimits.substringProbe, over: over.map((n) => `${n['Node Type']} ${n['Relation Name']} ${n['Index Name'] ?? ''}`) }).toEqual({ query, largest: true, over: [] });
    }
    const found = await searchNotes(db.pool, vaultId, { query: 'EF-423' });
    expect(found.results.filter((r) => r.matchedBy.includes('substring')).map((r) => r.path)).toEqual(['Area 3/Note 423.md']);
  });

  it('a substring answers the first notes by path that hold it, whichever way it was found (probe, walk, index)', async () => {
    // No word matches these (the notes' token is "REF-<n>"), so every hit is a substring hit, up to 51.
    // EF-1: 19 in the probe's 100 notes, then the walk fills the page; EF-42: 3 in the probe, the
    // walk reads to the vault's end; EF-31: 2 in the probe, the index; EF-423: none in the probe,
    // the index; EF-: every note, the probe.
    for (const query of ['EF-1', 'EF-42', 'EF-31', 'EF-423', 'EF-']) {
      const expected = await db.pool.anyFirst(sql.type(z.object({ path: z.string() }))`
        SELECT path FROM notes WHERE vault_id = ${vaultId} AND content ILIKE ${`%${query}%`} ORDER BY path LIMIT 50`);
      const found = await searchNotes(db.pool, vaultId, { query, limit: 50 });
      expect({ query, paths: found.results.map((r) => r.path).sort() }).toEqual({ query, paths: [...expected].sort() });
      expect(found.results.every((r) => r.matchedBy.join() === 'substring')).toBe(true);
    }
  });
});
