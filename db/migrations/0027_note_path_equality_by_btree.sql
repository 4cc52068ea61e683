-- Up Migration
-- Path search's trigram index is on lower(path), not on path (decision 110). pg_trgm's operator
-- class also answers `=`, and its GIN cost estimate can undercut the primary key: after an ANALYZE
-- the hot read's generic plan looked its note up through this index (3 ms and ~300 buffers on a
-- 54,000-note table instead of 0.01 ms and 4), and the substring indexer's join did the same (5 s a
-- batch of 500). An index on an expression cannot match `path = …`, so every look-up by path goes
-- through the primary key; path search asks `lower(path) LIKE lower(pattern)`, which is what ILIKE
-- on this C-collated column computes.
DROP INDEX notes_path_trgm_idx;
CREATE INDEX notes_path_lower_trgm_idx ON notes USING gin (lower(path) gin_trgm_ops);

-- Down Migration
DROP INDEX notes_path_lower_trgm_idx;
CREATE INDEX notes_path_trgm_idx ON notes USING gin (path gin_trgm_ops);
