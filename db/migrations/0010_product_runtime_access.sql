-- Up Migration

-- Runtime operations of a product organization this calendar month (UTC): one row per
-- organization, counted by a single conditional upsert so concurrent callers never overshoot
-- `settings.productRuntime.apiOperationsPerMonth` (domain/product-runtime/chain.ts).
CREATE TABLE organization_api_usage (
  organization_id uuid PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
  month_start timestamptz NOT NULL,
  used integer NOT NULL CHECK (used >= 0)
);

-- Who granted and who revoked a logical-vault grant: a person with workspace.manage in the
-- vault's workspace (through /api/dev), or System Operations (null). Never a service principal.
ALTER TABLE logical_vault_grants
  ADD COLUMN granted_by_account_id uuid REFERENCES accounts (id),
  ADD COLUMN revoked_by_account_id uuid REFERENCES accounts (id);

-- A product's request for a vault grant (bindHostedVault). It grants nothing: a person with
-- workspace.manage answers it by granting (or declining). One open request per installation and
-- vault; the vault must be a hosted vault of the installation's workspace.
CREATE TABLE vault_binding_requests (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  installation_id uuid NOT NULL REFERENCES product_installations (id) ON DELETE CASCADE,
  vault_id uuid REFERENCES vaults (id) ON DELETE CASCADE, -- null: the person chooses the vault
  access text NOT NULL CHECK (access IN ('read', 'write')),
  reason text NOT NULL DEFAULT '' CHECK (length(reason) <= 500),
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'granted', 'declined')),
  requested_by_principal_id uuid NOT NULL REFERENCES service_principals (id) ON DELETE CASCADE,
  decided_by_account_id uuid REFERENCES accounts (id),
  grant_id uuid REFERENCES logical_vault_grants (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  decided_at timestamptz
);
-- NULLS NOT DISTINCT: one open "any vault" request (vault_id null) per installation too.
CREATE UNIQUE INDEX vault_binding_requests_open_key ON vault_binding_requests (installation_id, vault_id) NULLS NOT DISTINCT WHERE state = 'pending';
CREATE INDEX vault_binding_requests_installation_idx ON vault_binding_requests (installation_id, created_at DESC, id);

-- Down Migration
DROP TABLE vault_binding_requests;
ALTER TABLE logical_vault_grants DROP COLUMN granted_by_account_id, DROP COLUMN revoked_by_account_id;
DROP TABLE organization_api_usage;
