// Search's indexes kept after the writes: substring search's trigrams (decision 106) and ranked
// search's words (decision 114). A trigger queues every note whose content or path a statement
// changes (migration 0025); `indexQueuedNotes` takes a batch of the queue and writes each note's
// current content and word vector (`notes.search`, as its write computed it) into
// `note_substring_docs`, which both indexes cover, or removes the entry of a note that is gone.
// Searches read the indexes and the queue (domain/notes/discovery.ts), so a note is found by its
// words and its content from the moment its write commits, indexed or not.
//
// Why a note is never lost between the two: taking a batch deletes its queue rows first, in a
// statement of its own, and reads the notes in a later statement (a later snapshot). A writer that
// changes a note after the delete must queue it again, and its upsert on the deleted row waits for
// this transaction to end, so it commits after it and the note is queued anew; a writer that
// committed before the read is read. Rows a writer holds are skipped (SKIP LOCKED) and taken by a
// later round, so any number of processes may index at once.
import { sql } from 'slonik';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { deferIndexMerges, mergeDeferredIndexEntries } from './store.ts';

const keySchema = z.object({ vaultId: z.uuid(), path: z.string() });
const countSchema = z.object({ count: z.number() });

export type IndexRound = { taken: number; indexed: number; removed: number };

/**
 * Indexes up to `batch` queued notes in one transaction; what it took, indexed and removed.
 * `afterTaking` runs between taking the batch and reading its notes (tests write a note there).
 */
export async function indexQueuedNotes(db: DatabasePool, batch = 500, afterTaking?: () => Promise<void>): Promise<IndexRound> {
  // An idle round is this one statement, not a transaction of three.
  const queued = await db.oneFirst(sql.type(z.object({ queued: z.boolean() }))`SELECT EXISTS (SELECT 1 FROM note_substring_pending) AS queued`);
  if (!queued) return { taken: 0, indexed: 0, removed: 0 };
  return db.transaction(async (tx) => {
    const taken = await tx.any(sql.type(keySchema)`
      DELETE FROM note_substring_pending p
       WHERE (p.vault_id, p.path) IN (SELECT q.vault_id, q.path FROM note_substring_pending q LIMIT ${batch} FOR UPDATE SKIP LOCKED)
      RETURNING p.vault_id AS "vaultId", p.path`);
    if (taken.length === 0) return { taken: 0, indexed: 0, removed: 0 };
    await afterTaking?.();
    // Its trigram and word entries are merged once, sorted, at the end of the batch (a third less time).
    const deferred = await deferIndexMerges(tx, 'note_substring_docs');
    const keys = sql.fragment`unnest(${sql.array(
      taken.map((k) => k.vaultId),
      'uuid',
    )}::uuid[], ${sql.array(
      taken.map((k) => k.path),
      'text',
    )}::text[]) AS k(vault_id, path)`;
    const indexed = await tx.oneFirst(sql.type(countSchema)`
      WITH written AS (
        INSERT INTO note_substring_docs AS d (vault_id, path, revision, content, search)
        SELECT n.vault_id, n.path, n.revision, n.content, n.search FROM ${keys} JOIN notes n ON n.vault_id = k.vault_id AND n.path = k.path
        ON CONFLICT (vault_id, path) DO UPDATE SET revision = excluded.revision, content = excluded.content, search = excluded.search
         WHERE d.revision IS DISTINCT FROM excluded.revision
        RETURNING 1)
      SELECT count(*)::int AS count FROM written`);
    const removed = await tx.oneFirst(sql.type(countSchema)`
      WITH gone AS (
        DELETE FROM note_substring_docs d USING ${keys}
         WHERE d.vault_id = k.vault_id AND d.path = k.path
           AND NOT EXISTS (SELECT 1 FROM notes n WHERE n.vault_id = k.vault_id AND n.path = k.path)
        RETURNING 1)
      SELECT count(*)::int AS count FROM gone`);
    if (deferred) await mergeDeferredIndexEntries(tx, 'note_substring_docs');
    return { taken: taken.length, indexed, removed };
  });
}

/** Indexes until the queue is empty, a batch per transaction (a catch-up; API processes index in rounds, api/substring-indexer.ts). */
export async function indexAllQueuedNotes(db: DatabasePool, batch = 500): Promise<number> {
  let taken = 0;
  for (let round = await indexQueuedNotes(db, batch); round.taken > 0; round = await indexQueuedNotes(db, batch)) taken += round.taken;
  return taken;
}

/** How many notes wait to be indexed (all vaults, or one). */
export async function queuedNoteCount(db: DatabasePool, vaultId?: string): Promise<number> {
  return db.oneFirst(sql.type(countSchema)`
    SELECT count(*)::int AS count FROM note_substring_pending WHERE ${vaultId ?? null}::uuid IS NULL OR vault_id = ${vaultId ?? null}::uuid`);
}
