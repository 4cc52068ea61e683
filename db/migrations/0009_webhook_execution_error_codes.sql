-- Up Migration
-- A failed delivery attempt records a stable code (what a client branches on) beside a short
-- message of ours; the raw network/TLS error text is no longer stored or shown.
ALTER TABLE webhook_executions ADD COLUMN error_code text;
UPDATE webhook_executions SET error_code = 'network_error', error = 'The delivery failed before a response arrived.' WHERE error IS NOT NULL AND status_code IS NULL AND outcome = 'failed';

-- Down Migration
ALTER TABLE webhook_executions DROP COLUMN error_code;
