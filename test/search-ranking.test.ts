// search_notes past `rankAllUpTo` word matches ranks a bounded candidate set (title matches, the
// longest notes) and says so. The limits are lowered here so a vault of a few
// hundred notes exercises what 5,000+ matches do in production; the reference is the same function
// ranking every match (`rankAllUpTo: Infinity`). Every case runs with the vault's notes all queued
// for the word index, all indexed, and half of them queued again (decision 114: a search reads the
// index for notes not queued and the live vector of queued ones), and answers the same.
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { beforeAll, describe, expect, it } from 'vitest';
import { emptyRow } from '../db/row-schemas.ts';
import { createAccount } from '../domain/identity/accounts.ts';
import { createVault } from '../domain/identity/vaults.ts';
import { searchNotes, searchLimits } from '../domain/notes/discovery.ts';
import { indexAllQueuedNotes, queuedNoteCount } from '../domain/notes/substring-index.ts';
import { useTestDatabase } from './support/harness.ts';

const db = useTestDatabase();
const NOTES = 300;
const bound = { rankAllUpTo: 100, boundedCandidates: 20 };
let vaultId: string;

/** Notes 0..NOTES-1, each with "orbit" once; some differ the way real notes do (see the cases below). */
async function seed(vault: string) {
  await db.pool.query(sql.type(emptyRow)`
    INSERT INTO notes (vault_id, path, path_key, title, content, revision, size_bytes)
    SELECT ${vault}, p.path, lower(p.path), p.title, c.content,
           'sha256:' || encode(sha256(convert_to(c.content, 'UTF8')), 'hex'), octet_length(c.content)
      FROM generate_series(0, ${NOTES - 1}) i,
           LATERAL (SELECT (CASE WHEN i % 2 = 0 THEN 'Even/' ELSE 'Odd/' END) || 'Note ' || lpad(i::text, 3, '0') || '.md' AS path,
                           CASE WHEN i IN (150, 250) THEN 'Orbit review ' || i ELSE 'Note ' || i END AS title) p,
           LATERAL (SELECT CASE
                             -- dense but short: eight occurrences in the shortest content of all
                             WHEN i = 290 THEN 'orbit orbit orbit orbit orbit orbit orbit orbit'
                             ELSE 'A note about the orbit of body ' || i || ' and its period.' ||
                                  -- longer notes with more occurrences: the length source finds them
                                  CASE WHEN i % 50 = 7 THEN repeat(' The orbit decays.', 1 + i % 4) ELSE '' END ||
                                  CASE WHEN i = 123 THEN ' A comet crosses it.' ELSE '' END
                           END AS content) c`);
}

beforeAll(async () => {
  const account = await createAccount(db.pool, { email: `search-${randomUUID()}@example.test`, displayName: 'Search', plan: 'premium' });
  vaultId = (await createVault(db.pool, { name: 'Ranking', ownerAccountId: account.id })).id;
  await seed(vaultId);
  await db.pool.query(sql.type(emptyRow)`ANALYZE notes`);
});

const paths = (r: { results: { path: string }[] }) => r.results.map((h) => h.path);

/** The vault's notes as the word index holds them: each state is entered once, in this order. */
const indexStates = [
  { state: 'every note queued, none indexed', queued: NOTES, enter: async () => {} },
  {
    state: 'every note indexed, none queued',
    queued: 0,
    enter: async () => {
      await indexAllQueuedNotes(db.pool);
      await db.pool.query(sql.type(emptyRow)`ANALYZE note_substring_docs`);
    },
  },
  {
    // Queued again as a write queues them; their entries are current, and must not count twice.
    state: 'every note indexed, the odd ones queued again',
    queued: NOTES / 2,
    enter: async () => {
      await db.pool.query(sql.type(emptyRow)`INSERT INTO note_substring_pending (vault_id, path) SELECT vault_id, path FROM notes WHERE vault_id = ${vaultId} AND path LIKE 'Odd/%'`);
    },
  },
];

describe.each(indexStates)('search_notes ranks a common word over a bounded candidate set, and says so ($state)', ({ queued, enter }) => {
  beforeAll(async () => {
    await enter();
    expect(await queuedNoteCount(db.pool, vaultId)).toBe(queued);
  });

  it('past rankAllUpTo matches the ranking is bounded: it ranks the title matches and the longest notes as the full ranking does, and can miss a short dense note', async () => {
    const bounded = await searchNotes(db.pool, vaultId, { query: 'orbit', limit: 10 }, bound);
    const full = await searchNotes(db.pool, vaultId, { query: 'orbit', limit: 10 }, { rankAllUpTo: Infinity });
    expect(bounded.ranking).toBe('bounded');
    expect(full.ranking).toBe('complete');
    expect(bounded.truncated).toBe(true);
    // Ranked first in full: eight occurrences in the shortest note of all. It is in no source of the
    // bounded set (no title match, the shortest note): what "bounded" gives up, and why the answer
    // says so.
    expect(paths(full)[0]).toBe('Even/Note 290.md');
    expect(paths(bounded)).not.toContain('Even/Note 290.md');
    // Everything else the full ranking puts first, the bounded one finds and orders the same: the
    // longest notes (most occurrences) and the two title matches (weight A).
    expect(paths(bounded).slice(0, 9)).toEqual(paths(full).slice(1, 10));
    expect(paths(bounded)).toEqual(expect.arrayContaining(['Even/Note 150.md', 'Even/Note 250.md', 'Odd/Note 007.md', 'Odd/Note 107.md', 'Odd/Note 207.md']));
  });

  it('a word spread evenly (equal ranks: the longer note first, then by path) gives exactly the full ranking', async () => {
    const bounded = await searchNotes(db.pool, vaultId, { query: 'period' }, bound);
    const full = await searchNotes(db.pool, vaultId, { query: 'period' }, { rankAllUpTo: Infinity });
    expect(bounded.ranking).toBe('bounded');
    // Equal ranks go to the longer note, and the longest notes are a source: the same answer.
    expect(bounded.results).toEqual(full.results);
    expect(bounded.results).toHaveLength(searchLimits.defaultResults);
  });

  it('up to rankAllUpTo matches every match is ranked; one more and the ranking is bounded', async () => {
    // "orbit" with "-comet" matches every note but one: NOTES - 1 matches.
    const at = await searchNotes(db.pool, vaultId, { query: 'orbit -comet', limit: 5 }, { rankAllUpTo: NOTES - 1, boundedCandidates: 5 });
    expect(at.ranking).toBe('complete');
    expect(paths(at)).toContain('Even/Note 290.md');
    const over = await searchNotes(db.pool, vaultId, { query: 'orbit -comet', limit: 5 }, { rankAllUpTo: NOTES - 2, boundedCandidates: 5 });
    expect(over.ranking).toBe('bounded');
  });

  it('a rare word is ranked completely; a query matching nothing says complete', async () => {
    const rare = await searchNotes(db.pool, vaultId, { query: 'comet' }, bound);
    expect(rare).toMatchObject({ ranking: 'complete', truncated: false });
    expect(paths(rare)).toEqual(['Odd/Note 123.md']);
    expect(await searchNotes(db.pool, vaultId, { query: 'asteroid' }, bound)).toMatchObject({ ranking: 'complete', results: [] });
  });

  it('pathPrefix bounds the candidates too: every source reads only under it', async () => {
    const odd = await searchNotes(db.pool, vaultId, { query: 'orbit', pathPrefix: 'Odd/' }, { rankAllUpTo: 50, boundedCandidates: 10 });
    expect(odd.ranking).toBe('bounded');
    expect(odd.results.length).toBeGreaterThan(0);
    expect(odd.results.every((h) => h.path.startsWith('Odd/'))).toBe(true);
    // Counted under the prefix: 150 odd notes are past 50, but 150 is not past 150.
    expect((await searchNotes(db.pool, vaultId, { query: 'orbit', pathPrefix: 'Odd/' }, { rankAllUpTo: 150 })).ranking).toBe('complete');
  });

  it('another vault\'s notes are never candidates', async () => {
    const account = await createAccount(db.pool, { email: `other-${randomUUID()}@example.test`, displayName: 'Other', plan: 'premium' });
    const other = (await createVault(db.pool, { name: 'Other', ownerAccountId: account.id })).id;
    const result = await searchNotes(db.pool, other, { query: 'orbit' }, bound);
    expect(result).toMatchObject({ ranking: 'complete', results: [], truncated: false });
  });
});
