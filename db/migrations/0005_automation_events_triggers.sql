-- Up Migration

-- Ingested external events, normalised into the versioned automation contract (contract_version).
CREATE TABLE automation_events (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  type text NOT NULL CHECK (type ~ '^[a-z][a-z0-9_.-]{0,127}$'),
  source text NOT NULL,
  occurred_at timestamptz NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now(),
  data jsonb NOT NULL,
  contract_version integer NOT NULL DEFAULT 1,
  idempotency_key text,
  received_by_account_id uuid REFERENCES accounts (id)
);
CREATE UNIQUE INDEX automation_events_key_idx ON automation_events (workspace_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX automation_events_workspace_idx ON automation_events (workspace_id, received_at DESC);

-- Triggers: an event type (+ filter) or a schedule (a Temporal Schedule kept in step with status).
-- When one fires it creates a run; processing a run creates an action proposal for review.
CREATE TABLE automation_triggers (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  created_by_account_id uuid NOT NULL REFERENCES accounts (id),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  kind text NOT NULL CHECK (kind IN ('event', 'schedule')),
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused')),
  event_type text,
  filter jsonb NOT NULL DEFAULT '{}'::jsonb,
  schedule jsonb,
  proposal jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((kind = 'event' AND event_type IS NOT NULL) OR (kind = 'schedule' AND schedule IS NOT NULL))
);
CREATE INDEX automation_triggers_match_idx ON automation_triggers (workspace_id, kind, status, event_type);

CREATE TABLE automation_runs (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  trigger_id uuid NOT NULL REFERENCES automation_triggers (id) ON DELETE CASCADE,
  event_id uuid REFERENCES automation_events (id) ON DELETE CASCADE,
  fire_key text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  proposal_id uuid REFERENCES action_proposals (id),
  error jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  processed_at timestamptz,
  processed_by_account_id uuid REFERENCES accounts (id),
  -- one run per trigger and event, or per trigger and scheduled firing
  UNIQUE (trigger_id, fire_key)
);
CREATE INDEX automation_runs_pending_idx ON automation_runs (workspace_id, created_at) WHERE status = 'pending';

-- Down Migration
DROP TABLE automation_runs, automation_triggers, automation_events;
