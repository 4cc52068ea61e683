-- Up Migration
-- A note's content and search vector (together ~5 KB for a page of prose) pass Postgres's 2 KB
-- threshold and are compressed: with lz4 instead of the default pglz, which was the largest single
-- cost in Postgres of importing prose (decision 107) and is slower to read back too. Rows written
-- before keep pglz until rewritten; both read alike. A server built without lz4 keeps pglz.
DO $$
BEGIN
  ALTER TABLE notes ALTER COLUMN content SET COMPRESSION lz4, ALTER COLUMN search SET COMPRESSION lz4;
  ALTER TABLE note_substring_docs ALTER COLUMN content SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  RAISE NOTICE 'lz4 is not available on this server; notes keep pglz';
END
$$;

-- Down Migration
ALTER TABLE note_substring_docs ALTER COLUMN content SET COMPRESSION default;
ALTER TABLE notes ALTER COLUMN content SET COMPRESSION default, ALTER COLUMN search SET COMPRESSION default;
