-- Up Migration
-- Provenance event ids are numbered per vault (1, 2, 3, … in each vault), so an id tells a tenant
-- nothing about other tenants' activity. The global identity column stays as the internal key.
-- Writers hold the vault row lock while they take the next number (see lockVault), so numbers are
-- gap-free and assigned in commit order within a vault.
ALTER TABLE vaults ADD COLUMN last_event_seq bigint NOT NULL DEFAULT 0;
ALTER TABLE note_events ADD COLUMN vault_seq bigint;
UPDATE note_events e SET vault_seq = n.seq
  FROM (SELECT id, row_number() OVER (PARTITION BY vault_id ORDER BY id) AS seq FROM note_events) n
 WHERE n.id = e.id;
UPDATE vaults v SET last_event_seq = m.seq FROM (SELECT vault_id, max(vault_seq) AS seq FROM note_events GROUP BY vault_id) m WHERE m.vault_id = v.id;
ALTER TABLE note_events ALTER COLUMN vault_seq SET NOT NULL;
CREATE UNIQUE INDEX note_events_vault_seq_idx ON note_events (vault_id, vault_seq);
DROP INDEX note_events_vault_idx;

-- Down Migration
CREATE INDEX note_events_vault_idx ON note_events (vault_id, id);
DROP INDEX note_events_vault_seq_idx;
ALTER TABLE note_events DROP COLUMN vault_seq;
ALTER TABLE vaults DROP COLUMN last_event_seq;
