-- Up Migration
-- A lease's reservation (REST and MCP allowances, the Product Runtime's monthly operations) is one statement (decision 101): an upsert that computes the grant
-- from the row it locked and stores it here, so RETURNING can say what was granted and what the
-- counts were before it (the new counts less the grant).
ALTER TABLE usage_counters ADD COLUMN last_granted integer NOT NULL DEFAULT 0;
ALTER TABLE organization_api_usage ADD COLUMN last_granted integer NOT NULL DEFAULT 0;

-- Down Migration
ALTER TABLE organization_api_usage DROP COLUMN last_granted;
ALTER TABLE usage_counters DROP COLUMN last_granted;
