-- Up Migration
-- The admission epoch (migration 0028) covers the Product Runtime's chain as well (decision 112,
-- domain/product-runtime/chain.ts): an API process keeps what the chain resolved for a credential
-- and vault (the credential's scopes and expiry, its principal, installation, product,
-- organization and its settings, the workspace assignment and the vault grant) and reuses it while
-- the epoch stands still, so every change to a row the chain reads replaces the epoch at its commit.
-- Left out: a credential's last use, touched at most once a minute on the hot path and not judged.
-- The chain also reads vaults (a grant's vault must belong to the installation's workspace): 0028
-- covers them. test/admission-cache.test.ts holds each table's list to its columns.
CREATE CONSTRAINT TRIGGER service_credentials_admission_epoch
  AFTER INSERT OR DELETE OR UPDATE OF id, service_principal_id, secret_hash, display_prefix, scopes, created_at, expires_at, revoked_at ON service_credentials
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION advance_admission_epoch();
DO $$
DECLARE
  t text;
BEGIN
  -- Every column of the other six.
  FOREACH t IN ARRAY ARRAY['service_principals', 'product_installations', 'product_definitions', 'organizations', 'organization_workspaces', 'logical_vault_grants'] LOOP
    EXECUTE format('CREATE CONSTRAINT TRIGGER %I AFTER INSERT OR DELETE OR UPDATE ON %I
                      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION advance_admission_epoch()', t || '_admission_epoch', t);
  END LOOP;
  FOREACH t IN ARRAY ARRAY['service_credentials', 'service_principals', 'product_installations', 'product_definitions', 'organizations', 'organization_workspaces', 'logical_vault_grants'] LOOP
    EXECUTE format('CREATE TRIGGER %I AFTER TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION advance_admission_epoch()', t || '_admission_epoch_truncate', t);
  END LOOP;
END
$$;

-- Down Migration
DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['service_credentials', 'service_principals', 'product_installations', 'product_definitions', 'organizations', 'organization_workspaces', 'logical_vault_grants'] LOOP
    EXECUTE format('DROP TRIGGER %I ON %I', t || '_admission_epoch', t);
    EXECUTE format('DROP TRIGGER %I ON %I', t || '_admission_epoch_truncate', t);
  END LOOP;
END
$$;
