-- Up Migration

-- Outbound webhook endpoints. The signing secret is stored encrypted (AES-256-GCM, key id first);
-- creating an endpoint permits nothing else.
CREATE TABLE webhook_endpoints (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  created_by_account_id uuid NOT NULL REFERENCES accounts (id),
  url text NOT NULL,
  event_types text[] NOT NULL,
  description text NOT NULL DEFAULT '',
  secret_sealed text NOT NULL,
  secret_prefix text NOT NULL,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  disabled_reason text,
  failure_streak integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_workspace_idx ON webhook_endpoints (workspace_id, status);

-- Every delivery attempt.
CREATE TABLE webhook_executions (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL,
  message_id text NOT NULL,
  event_id uuid NOT NULL,
  attempt integer NOT NULL,
  outcome text NOT NULL CHECK (outcome IN ('delivered', 'failed', 'refused', 'gone', 'skipped')),
  status_code integer,
  error text,
  duration_ms integer,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (message_id, attempt)
);
CREATE INDEX webhook_executions_workspace_idx ON webhook_executions (workspace_id, id DESC);

-- Down Migration
DROP TABLE webhook_executions, webhook_endpoints;
