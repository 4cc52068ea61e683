-- Up Migration
-- Substring search's trigram index is kept after the write that changes a note, not inside it
-- (decision 106, domain/notes/substring-index.ts): its entries were ~80 % of what importing prose
-- costs. Every change of a note's content or path queues the note (a trigger, whoever writes);
-- each API process indexes the queue into `note_substring_docs` (the content its trigram index
-- covers, at a revision); a search reads the index and every queued note of the vault, then checks
-- the live content, so its answer is exact at once.
CREATE TABLE note_substring_docs (
  vault_id uuid NOT NULL REFERENCES vaults (id) ON DELETE CASCADE,
  path text COLLATE "C" NOT NULL,
  revision text NOT NULL,
  content text NOT NULL,
  PRIMARY KEY (vault_id, path)
);
CREATE INDEX note_substring_docs_trgm_idx ON note_substring_docs USING gin (content gin_trgm_ops);

-- Notes whose content the index does not hold as it is now (or whose path is gone).
CREATE TABLE note_substring_pending (
  vault_id uuid NOT NULL REFERENCES vaults (id) ON DELETE CASCADE,
  path text COLLATE "C" NOT NULL,
  queued_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (vault_id, path)
);
-- A queue: rows come and go by the thousand, and a search reads a vault's rows through the key, so
-- dead ones are vacuumed after a thousand rather than after a fifth of the table.
ALTER TABLE note_substring_pending SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000);

-- Statement-level: one insert per writing statement, however many notes it writes. ON CONFLICT DO
-- UPDATE (not DO NOTHING): a queued row the indexer is taking is locked, and the writer waits for
-- it to be taken, then queues the note again (the indexer may have read the content before it).
CREATE FUNCTION queue_note_substrings_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO note_substring_pending AS p (vault_id, path) SELECT vault_id, path FROM inserted_notes
  ON CONFLICT (vault_id, path) DO UPDATE SET queued_at = excluded.queued_at;
  RETURN NULL;
END
$$;
CREATE FUNCTION queue_note_substrings_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- A new revision at a path, or a path that is gone (a move): the latter only clears its entry.
  INSERT INTO note_substring_pending AS p (vault_id, path)
  SELECT n.vault_id, n.path FROM updated_notes n
   WHERE NOT EXISTS (SELECT 1 FROM previous_notes o WHERE o.vault_id = n.vault_id AND o.path = n.path AND o.revision = n.revision)
  UNION
  SELECT o.vault_id, o.path FROM previous_notes o
   WHERE NOT EXISTS (SELECT 1 FROM updated_notes n WHERE n.vault_id = o.vault_id AND n.path = o.path)
  ON CONFLICT (vault_id, path) DO UPDATE SET queued_at = excluded.queued_at;
  RETURN NULL;
END
$$;
CREATE FUNCTION queue_note_substrings_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO note_substring_pending AS p (vault_id, path)
  SELECT d.vault_id, d.path FROM deleted_notes d WHERE EXISTS (SELECT 1 FROM vaults v WHERE v.id = d.vault_id)
  ON CONFLICT (vault_id, path) DO UPDATE SET queued_at = excluded.queued_at;
  RETURN NULL;
END
$$;
CREATE TRIGGER notes_queue_substrings_inserted AFTER INSERT ON notes REFERENCING NEW TABLE AS inserted_notes
  FOR EACH STATEMENT EXECUTE FUNCTION queue_note_substrings_inserted();
CREATE TRIGGER notes_queue_substrings_updated AFTER UPDATE ON notes REFERENCING OLD TABLE AS previous_notes NEW TABLE AS updated_notes
  FOR EACH STATEMENT EXECUTE FUNCTION queue_note_substrings_updated();
CREATE TRIGGER notes_queue_substrings_deleted AFTER DELETE ON notes REFERENCING OLD TABLE AS deleted_notes
  FOR EACH STATEMENT EXECUTE FUNCTION queue_note_substrings_deleted();

-- The notes there are, indexed now; then the index on notes itself goes.
INSERT INTO note_substring_docs (vault_id, path, revision, content) SELECT vault_id, path, revision, content FROM notes;
DROP INDEX notes_content_trgm_idx;

-- Down Migration
CREATE INDEX notes_content_trgm_idx ON notes USING gin (content gin_trgm_ops);
DROP TRIGGER notes_queue_substrings_deleted ON notes;
DROP TRIGGER notes_queue_substrings_updated ON notes;
DROP TRIGGER notes_queue_substrings_inserted ON notes;
DROP FUNCTION queue_note_substrings_deleted();
DROP FUNCTION queue_note_substrings_updated();
DROP FUNCTION queue_note_substrings_inserted();
DROP TABLE note_substring_pending;
DROP TABLE note_substring_docs;
