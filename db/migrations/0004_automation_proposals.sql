-- Up Migration

-- Action proposals: something a bridge or agent asks to do. A proposal is never approval or
-- execution; its review runs as a Temporal workflow whose id is `proposal-review-<id>`.
CREATE TABLE action_proposals (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  proposer_account_id uuid NOT NULL REFERENCES accounts (id),
  -- An agent proposing on behalf of a person: neither may approve the proposal.
  acting_for_account_id uuid REFERENCES accounts (id),
  bridge text NOT NULL CHECK (bridge ~ '^[a-z][a-z0-9-]{1,62}$'),
  action_kind text NOT NULL,
  action jsonb NOT NULL,
  summary text NOT NULL DEFAULT '' CHECK (length(summary) <= 2000),
  state text NOT NULL DEFAULT 'proposed'
    CHECK (state IN ('proposed', 'pending_review', 'approved', 'rejected', 'expired', 'executing', 'executed', 'failed', 'undoing', 'undone')),
  reviewer_account_id uuid REFERENCES accounts (id),
  decision_reason text,
  expires_at timestamptz NOT NULL,
  workflow_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX action_proposals_workspace_idx ON action_proposals (workspace_id, state, created_at DESC, id);

-- Every state a proposal passed through, with who and why: the audit trail.
CREATE TABLE action_proposal_history (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  proposal_id uuid NOT NULL REFERENCES action_proposals (id) ON DELETE CASCADE,
  state text NOT NULL,
  occurred_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  actor_account_id uuid,
  detail jsonb NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX action_proposal_history_idx ON action_proposal_history (proposal_id, id);

-- Forge executions: at most one apply and one undo per proposal. The undo plan is written before
-- acting; the receipt after.
CREATE TABLE forge_executions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  proposal_id uuid NOT NULL REFERENCES action_proposals (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('apply', 'undo')),
  state text NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'succeeded', 'failed')),
  undo_plan jsonb,
  receipt jsonb,
  error jsonb,
  attempts integer NOT NULL DEFAULT 0,
  started_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  UNIQUE (proposal_id, kind)
);

-- Down Migration
DROP TABLE forge_executions, action_proposal_history, action_proposals;
