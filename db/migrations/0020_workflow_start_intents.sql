-- Up Migration

-- Durable workflow starts (issue 25): a transactional outbox. Whatever an HTTP request commits that a
-- workflow must act on (a proposal to review, an event to deliver, an undo to run, an OAuth attempt
-- to follow) records the start it needs in the same transaction, keyed by the workflow's
-- deterministic id. The request still starts the workflow at once when Temporal answers; the relay
-- (api/workflow-relay.ts, in every API process) starts whatever is left, so an acknowledged request
-- never depends on a client retrying it. Conflict policies make a repeated start harmless, so a
-- start made twice (the request and the relay racing) changes nothing.
CREATE TABLE workflow_start_intents (
  workflow_id text PRIMARY KEY CHECK (length(workflow_id) BETWEEN 1 AND 300),
  -- What to start: one of the kinds api/workflow-starts knows, with its arguments.
  kind text NOT NULL CHECK (length(kind) BETWEEN 1 AND 100),
  input jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- Not before this instant: set forward by a claim (the claim's lease) and by a failed attempt (backoff).
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  started_at timestamptz,
  -- The stable reason of the last failed attempt (never a payload).
  last_error text CHECK (length(last_error) <= 500)
);
-- The relay's work queue: pending intents by when they are due.
CREATE INDEX workflow_start_intents_pending_idx ON workflow_start_intents (next_attempt_at) WHERE started_at IS NULL;

-- Down Migration
DROP TABLE workflow_start_intents;
