-- Up Migration

-- Every request a webhook delivery makes is recorded (issue 25). A row used to be keyed by
-- (message_id, attempt) and written ON CONFLICT DO NOTHING after the request, so a repeat of the
-- same attempt (the activity retried after a worker crash or a timeout that followed the POST, a
-- workflow reset or started again) reached the receiver and left no row. Now each request is its
-- own row (keyed by its id), written as 'sending' just before the request and completed with the
-- outcome; `attempt` stays the delivery attempt (the workflow's counter) and `activity_attempt`
-- records Temporal's attempt number of the activity when the worker supplies it.
ALTER TABLE webhook_executions DROP CONSTRAINT webhook_executions_message_id_attempt_key;
ALTER TABLE webhook_executions DROP CONSTRAINT webhook_executions_outcome_check;
ALTER TABLE webhook_executions ADD CONSTRAINT webhook_executions_outcome_check
  CHECK (outcome IN ('sending', 'delivered', 'failed', 'refused', 'gone', 'skipped'));
ALTER TABLE webhook_executions ADD COLUMN activity_attempt integer CHECK (activity_attempt >= 1);
-- The earlier requests of an attempt (the executions API marks a later one as a repeat).
CREATE INDEX webhook_executions_message_idx ON webhook_executions (message_id, attempt, id);
-- An attempt that sent nothing (address refused at connect, endpoint disabled) is recorded once
-- however often its activity runs: a retry of it must not read as another request.
CREATE UNIQUE INDEX webhook_executions_unsent_once ON webhook_executions (message_id, attempt) WHERE outcome IN ('refused', 'skipped');

-- Down Migration
-- Back to one row per (message_id, attempt): the first request of each attempt is kept.
DELETE FROM webhook_executions x USING webhook_executions y WHERE x.message_id = y.message_id AND x.attempt = y.attempt AND x.id > y.id;
UPDATE webhook_executions SET outcome = 'failed', error_code = 'network_error', error = 'The delivery failed before a response arrived.' WHERE outcome = 'sending';
DROP INDEX webhook_executions_unsent_once;
DROP INDEX webhook_executions_message_idx;
ALTER TABLE webhook_executions DROP COLUMN activity_attempt;
ALTER TABLE webhook_executions DROP CONSTRAINT webhook_executions_outcome_check;
ALTER TABLE webhook_executions ADD CONSTRAINT webhook_executions_outcome_check CHECK (outcome IN ('delivered', 'failed', 'refused', 'gone', 'skipped'));
ALTER TABLE webhook_executions ADD CONSTRAINT webhook_executions_message_id_attempt_key UNIQUE (message_id, attempt);
