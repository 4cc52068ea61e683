-- Up Migration

-- For WikiLink resolution: the note's own file name key, and the file-name keys of the notes it
-- links to (both lower-cased, without folder and `.md`, computed by the application on write), so
-- "who links here" is an indexed look-up.
ALTER TABLE notes
  ADD COLUMN basename_key text NOT NULL DEFAULT '',
  ADD COLUMN link_keys text[] NOT NULL DEFAULT '{}';

UPDATE notes SET basename_key = lower(regexp_replace(regexp_replace(path, '^.*/', ''), '\.md$', ''));
UPDATE notes SET link_keys = coalesce(
  (SELECT array_agg(DISTINCT lower(regexp_replace(regexp_replace(l ->> 'target', '^.*/', ''), '\.md$', '')))
     FROM jsonb_array_elements(links) l WHERE coalesce(l ->> 'target', '') <> ''), '{}');

CREATE INDEX notes_basename_idx ON notes (vault_id, basename_key);
CREATE INDEX notes_link_keys_idx ON notes USING gin (link_keys);

-- Substring search (search_notes) over content.
CREATE INDEX notes_content_trgm_idx ON notes USING gin (content gin_trgm_ops);

-- Down Migration
DROP INDEX notes_content_trgm_idx;
DROP INDEX notes_link_keys_idx;
DROP INDEX notes_basename_idx;
ALTER TABLE notes DROP COLUMN link_keys, DROP COLUMN basename_key;
