-- Up Migration

-- Context scopes: a stable, caller-facing id (scope_key, unique per workspace) for a slice of a
-- workspace (a course, a team, the workspace itself), defined by people through System Operations,
-- never by a service principal. Policy is inherited from the parent chain; the audience is resolved
-- here and never taken from a caller.
CREATE TABLE context_scopes (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  scope_key text NOT NULL CHECK (scope_key ~ '^[a-z0-9][a-z0-9._-]{0,99}$'),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  kind text NOT NULL CHECK (kind IN ('workspace', 'course', 'team', 'project')),
  parent_id uuid REFERENCES context_scopes (id),
  audience_kind text NOT NULL CHECK (audience_kind IN ('workspace_members', 'course_educators', 'team_members', 'named_group')),
  audience_description text NOT NULL CHECK (length(audience_description) BETWEEN 1 AND 500),
  vault_id uuid REFERENCES vaults (id),
  policy jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(policy) = 'object'),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, scope_key),
  CHECK (parent_id IS DISTINCT FROM id)
);
CREATE INDEX context_scopes_parent_idx ON context_scopes (parent_id);

-- An installation sees a scope only through an explicit grant, made by System Operations.
CREATE TABLE context_scope_grants (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  scope_id uuid NOT NULL REFERENCES context_scopes (id) ON DELETE CASCADE,
  installation_id uuid NOT NULL REFERENCES product_installations (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
CREATE UNIQUE INDEX context_scope_grants_live_key ON context_scope_grants (scope_id, installation_id) WHERE revoked_at IS NULL;
CREATE INDEX context_scope_grants_installation_idx ON context_scope_grants (installation_id) WHERE revoked_at IS NULL;

-- Shared memory of a scope: only ever written by a Forge execution of an approved `memory.promote`
-- proposal (one memory per proposal), and removed (kept, marked) by its undo.
CREATE TABLE scope_memories (
  id uuid PRIMARY KEY,
  scope_id uuid NOT NULL REFERENCES context_scopes (id) ON DELETE CASCADE,
  proposal_id uuid NOT NULL UNIQUE REFERENCES action_proposals (id) ON DELETE CASCADE,
  content text NOT NULL,
  reviewed_by_account_id uuid REFERENCES accounts (id),
  reviewed_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  removed_at timestamptz
);
CREATE INDEX scope_memories_scope_idx ON scope_memories (scope_id, created_at DESC, id) WHERE removed_at IS NULL;

-- A proposal is proposed by an account (REST, bridges) or by a Product Runtime service principal
-- (a memory candidate); exactly one of them.
ALTER TABLE action_proposals
  ALTER COLUMN proposer_account_id DROP NOT NULL,
  ADD COLUMN proposer_principal_id uuid REFERENCES service_principals (id),
  ADD CONSTRAINT action_proposals_one_proposer CHECK (num_nonnulls(proposer_account_id, proposer_principal_id) = 1);

-- Down Migration
ALTER TABLE action_proposals DROP CONSTRAINT action_proposals_one_proposer, DROP COLUMN proposer_principal_id;
DELETE FROM action_proposals WHERE proposer_account_id IS NULL;
ALTER TABLE action_proposals ALTER COLUMN proposer_account_id SET NOT NULL;
DROP TABLE scope_memories, context_scope_grants, context_scopes;
