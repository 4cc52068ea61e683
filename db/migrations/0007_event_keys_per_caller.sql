-- Up Migration
-- Event idempotency keys belong to the caller who sent them, not to the whole workspace: two bridges
-- using the same key must not see each other's events.
DROP INDEX automation_events_key_idx;
CREATE UNIQUE INDEX automation_events_key_idx ON automation_events (workspace_id, received_by_account_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

-- Down Migration
DROP INDEX automation_events_key_idx;
CREATE UNIQUE INDEX automation_events_key_idx ON automation_events (workspace_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
