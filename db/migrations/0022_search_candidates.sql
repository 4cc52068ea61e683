-- Up Migration
-- The sources of a bounded word ranking (domain/notes/discovery.ts searchNotes, decision 90): a word
-- in more than 5,000 of a vault's notes is ranked over its title matches and its longest notes
-- instead of over every match. Both are small: a title's words, and one integer per note.
CREATE INDEX notes_title_search_idx ON notes USING gin (to_tsvector('simple', title));
-- path too: the ranking's tie order (size, then path) read straight from the index, so a walk stops at
-- its limit instead of sorting every note of a size the vault has many of.
CREATE INDEX notes_size_idx ON notes (vault_id, size_bytes DESC, path);

-- Down Migration
DROP INDEX notes_size_idx;
DROP INDEX notes_title_search_idx;
