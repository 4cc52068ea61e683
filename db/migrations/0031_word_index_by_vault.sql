-- Up Migration
-- Ranked search finds a word's notes through one index that holds the vault and the word together
-- (btree_gin), on the vault's id as text so that nothing else can answer the search's condition
-- (decision 122, issue 50). With the word alone in the index, the planner chose between it and the
-- table's primary key (vault_id, path) by its estimate of the vault's rows: right after a bulk
-- import that estimate is about one row (statistics that predate the vault), so it walked every
-- note of the vault and read each note's vector (a rare word 0.6-1 s on 5,000 prose notes instead of
-- a few ms), and for a word in most notes it counted matches by reading 2,001 vectors (TOASTed on
-- prose: ~4 buffers each) instead of the index's entries. An expression index cannot match
-- `vault_id = …`, so every look-up by key still goes through the primary key (decision 110's
-- reasoning, reversed), and `vault_id::text = …` can only go through this index.
CREATE EXTENSION IF NOT EXISTS btree_gin;
CREATE INDEX note_substring_docs_vault_search_idx ON note_substring_docs USING gin ((vault_id::text), search);
DROP INDEX note_substring_docs_search_idx;

-- Down Migration
CREATE INDEX note_substring_docs_search_idx ON note_substring_docs USING gin (search);
DROP INDEX note_substring_docs_vault_search_idx;
