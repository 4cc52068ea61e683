-- Up Migration
-- Ranked search's word index (GIN over a note's tsvector) is kept after the write that changes a
-- note, in the table substring search's index already keeps there (decision 114, after 106): its
-- entries were a quarter of what importing prose costs. A note's vector is still computed by its
-- write (`notes.search`, generated) and ranked from there; `note_substring_docs.search` is that
-- vector copied at the entry's revision, and only its index finds candidates. A search takes
-- candidates from this index for every note not queued and from the live vector of every queued
-- note, so its answer is exact from the moment a write commits. The table keeps its name from 0025.
ALTER TABLE note_substring_docs ADD COLUMN search tsvector NOT NULL DEFAULT ''::tsvector;
DO $$
BEGIN
  ALTER TABLE note_substring_docs ALTER COLUMN search SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  RAISE NOTICE 'lz4 is not available on this server; the entries keep pglz';
END
$$;
-- Entries at their note's revision take its vector; any other entry's note is queued, and the
-- indexer rewrites it (a search meanwhile reads the note's own vector).
UPDATE note_substring_docs d SET search = n.search FROM notes n
 WHERE n.vault_id = d.vault_id AND n.path = d.path AND n.revision = d.revision;
-- Every entry the indexer writes names its vector.
ALTER TABLE note_substring_docs ALTER COLUMN search DROP DEFAULT;
CREATE INDEX note_substring_docs_search_idx ON note_substring_docs USING gin (search);
DROP INDEX notes_search_idx;

-- Down Migration
CREATE INDEX notes_search_idx ON notes USING gin (search);
DROP INDEX note_substring_docs_search_idx;
ALTER TABLE note_substring_docs DROP COLUMN search;
