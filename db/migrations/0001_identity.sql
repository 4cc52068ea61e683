-- Up Migration

-- Accounts are people (or their agents) holding a plan. The plan is read on every request,
-- so a downgrade takes effect at once.
CREATE TABLE accounts (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  email text NOT NULL CHECK (length(email) BETWEEN 3 AND 320),
  display_name text NOT NULL CHECK (length(display_name) BETWEEN 1 AND 200),
  plan text NOT NULL CHECK (plan IN ('premium', 'professional', 'developer_agent', 'team')),
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended', 'closed')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX accounts_email_key ON accounts (lower(email));

-- Personal access tokens: only the SHA-256 of the token is kept. Tokens are 256-bit random, so a
-- fast hash is enough; display_prefix lets a person recognise a token in a listing.
CREATE TABLE access_tokens (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  token_hash text NOT NULL UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
  display_prefix text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  expires_at timestamptz,
  revoked_at timestamptz,
  replaced_by uuid REFERENCES access_tokens (id)
);
CREATE INDEX access_tokens_account_idx ON access_tokens (account_id);

CREATE TABLE workspaces (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  owner_account_id uuid NOT NULL REFERENCES accounts (id),
  created_at timestamptz NOT NULL DEFAULT now()
);

-- A role is a named set of permissions inside one workspace (domain/identity/permissions.ts
-- lists the permission names).
CREATE TABLE workspace_roles (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  name text NOT NULL CHECK (name ~ '^[a-z][a-z0-9_-]{0,62}$'),
  permissions text[] NOT NULL,
  builtin boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, name),
  UNIQUE (workspace_id, id)
);

CREATE TABLE workspace_members (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  role_id uuid NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, account_id),
  -- the role must belong to the same workspace
  FOREIGN KEY (workspace_id, role_id) REFERENCES workspace_roles (workspace_id, id)
);
CREATE INDEX workspace_members_account_idx ON workspace_members (account_id);

-- A hosted vault belongs to exactly one account or one workspace.
CREATE TABLE vaults (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  owner_account_id uuid REFERENCES accounts (id),
  owner_workspace_id uuid REFERENCES workspaces (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK (num_nonnulls(owner_account_id, owner_workspace_id) = 1)
);
CREATE INDEX vaults_owner_account_idx ON vaults (owner_account_id);
CREATE INDEX vaults_owner_workspace_idx ON vaults (owner_workspace_id);

-- The explicit hosted mapping that gateways address a vault by. Revoking a mapping cuts access
-- without touching the vault's content.
CREATE TABLE vault_mappings (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  vault_id uuid NOT NULL REFERENCES vaults (id) ON DELETE CASCADE,
  label text NOT NULL DEFAULT '' CHECK (length(label) <= 200),
  created_by_account_id uuid REFERENCES accounts (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
CREATE INDEX vault_mappings_vault_idx ON vault_mappings (vault_id);

-- Product Runtime chain: organization → product definition → customer installation →
-- service principal → credential (scopes) → organization workspace assignment → logical-vault grant.
CREATE TABLE organizations (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
  settings jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(settings) = 'object'),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE organization_workspaces (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz,
  PRIMARY KEY (organization_id, workspace_id)
);

CREATE TABLE product_definitions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  slug text NOT NULL UNIQUE CHECK (slug ~ '^[a-z][a-z0-9-]{1,62}$'),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'retired')),
  redirect_uris text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE product_installations (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id),
  product_definition_id uuid NOT NULL REFERENCES product_definitions (id),
  workspace_id uuid NOT NULL REFERENCES workspaces (id),
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended', 'uninstalled')),
  configuration jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(configuration) = 'object'),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX product_installations_org_idx ON product_installations (organization_id);

CREATE TABLE service_principals (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  installation_id uuid NOT NULL REFERENCES product_installations (id) ON DELETE CASCADE,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE service_credentials (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  service_principal_id uuid NOT NULL REFERENCES service_principals (id) ON DELETE CASCADE,
  secret_hash text NOT NULL UNIQUE CHECK (secret_hash ~ '^[0-9a-f]{64}$'),
  display_prefix text NOT NULL,
  scopes text[] NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  expires_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX service_credentials_principal_idx ON service_credentials (service_principal_id);

CREATE TABLE logical_vault_grants (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  installation_id uuid NOT NULL REFERENCES product_installations (id) ON DELETE CASCADE,
  vault_id uuid NOT NULL REFERENCES vaults (id) ON DELETE CASCADE,
  access text NOT NULL CHECK (access IN ('read', 'write')),
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
CREATE UNIQUE INDEX logical_vault_grants_active_key ON logical_vault_grants (installation_id, vault_id) WHERE revoked_at IS NULL;

-- Down Migration
DROP TABLE logical_vault_grants, service_credentials, service_principals, product_installations,
  product_definitions, organization_workspaces, organizations, vault_mappings, vaults,
  workspace_members, workspace_roles, workspaces, access_tokens, accounts;
