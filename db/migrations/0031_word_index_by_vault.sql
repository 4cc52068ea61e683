-- Up Migration
-- Search finds a vault's notes through one index that holds the vault, the words and the trigrams
-- together (btree_gin for the vault), on the vault's id as text so that nothing else can answer the
-- search's condition (decision 137, issue 50). With the words or the trigrams alone in an index,
-- the planner chose between it and the table's primary key (vault_id, path) by its estimates: right
-- after a bulk import the vault is estimated at about one row (statistics that predate it), so it
-- walked every note of the vault and read each note's vector (a rare word 0.6-1 s on 5,000 prose
-- notes instead of a few ms); and a text the table's statistics call common (other tenants' words)
-- was looked for by reading every note of the vault, however rare in it. One index, not one for the
-- words and one for the trigrams: with two, the planner used either one for the vault alone and
-- checked the other condition note by note. An expression index cannot match `vault_id = …`, so
-- every look-up by key still goes through the primary key (decision 110's reasoning, reversed), and
-- `vault_id::text = …` only through this index.
CREATE EXTENSION IF NOT EXISTS btree_gin;
CREATE INDEX note_substring_docs_vault_idx ON note_substring_docs USING gin ((vault_id::text), search, content gin_trgm_ops);
DROP INDEX note_substring_docs_search_idx;
DROP INDEX note_substring_docs_trgm_idx;

-- Down Migration
CREATE INDEX note_substring_docs_trgm_idx ON note_substring_docs USING gin (content gin_trgm_ops);
CREATE INDEX note_substring_docs_search_idx ON note_substring_docs USING gin (search);
DROP INDEX note_substring_docs_vault_idx;
