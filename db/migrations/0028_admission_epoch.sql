-- Up Migration
-- The admission epoch (decision 111, domain/principals/admission-cache.ts). An API process keeps
-- what admitting a token to a mapping found (the token's account, the caller's access to the
-- mapping) and reuses it while this number stands still: every change to a row that admission reads
-- replaces it in the changing transaction, so a statement that reads the epoch unchanged reads the
-- same tokens, accounts, mappings, vaults, memberships and roles as the statement that filled the
-- entry. The hot read then asks Postgres for the note and this value only: one index look-up where
-- admission's statement made seven.
-- The epoch is a random value, not a counter: the cache only asks whether it is the same, and a
-- database restored to an earlier point and changed again would count through numbers a process
-- still holds, for other rows; a new random value each change cannot name two states.
CREATE TABLE admission_epoch (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  epoch uuid NOT NULL
);
INSERT INTO admission_epoch (singleton, epoch) VALUES (true, gen_random_uuid());

CREATE FUNCTION advance_admission_epoch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE admission_epoch SET epoch = gen_random_uuid();
  RETURN NULL;
END
$$;

-- Deferred to the commit: the row lock on the epoch is taken last and held only for the commit
-- itself, so two transactions can never wait on each other through it (each takes it after every
-- other lock it takes), and admission's writes do not queue behind each other for longer than a
-- commit. The columns listed are every column but the two that change on hot paths and that
-- admission does not read: a token's last use (touched once a minute, domain/identity/accounts.ts)
-- and a vault's event sequence (every note write, domain/notes/store.ts).
-- test/admission-cache.test.ts holds each table's list to its columns, so a new column is a decision.
CREATE CONSTRAINT TRIGGER access_tokens_admission_epoch
  AFTER INSERT OR DELETE OR UPDATE OF id, account_id, name, token_hash, display_prefix, created_at, expires_at, revoked_at, replaced_by ON access_tokens
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION advance_admission_epoch();
CREATE CONSTRAINT TRIGGER vaults_admission_epoch
  AFTER INSERT OR DELETE OR UPDATE OF id, name, owner_account_id, owner_workspace_id, created_at ON vaults
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION advance_admission_epoch();
DO $$
DECLARE
  t text;
BEGIN
  -- Every column of the other four.
  FOREACH t IN ARRAY ARRAY['accounts', 'vault_mappings', 'workspace_members', 'workspace_roles'] LOOP
    EXECUTE format('CREATE CONSTRAINT TRIGGER %I AFTER INSERT OR DELETE OR UPDATE ON %I
                      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION advance_admission_epoch()', t || '_admission_epoch', t);
  END LOOP;
  -- Constraint triggers cannot fire on TRUNCATE; these do (at once: a TRUNCATE takes an exclusive lock anyway).
  FOREACH t IN ARRAY ARRAY['access_tokens', 'accounts', 'vault_mappings', 'vaults', 'workspace_members', 'workspace_roles'] LOOP
    EXECUTE format('CREATE TRIGGER %I AFTER TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION advance_admission_epoch()', t || '_admission_epoch_truncate', t);
  END LOOP;
END
$$;

-- Down Migration
DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['access_tokens', 'accounts', 'vault_mappings', 'vaults', 'workspace_members', 'workspace_roles'] LOOP
    EXECUTE format('DROP TRIGGER %I ON %I', t || '_admission_epoch', t);
    EXECUTE format('DROP TRIGGER %I ON %I', t || '_admission_epoch_truncate', t);
  END LOOP;
END
$$;
DROP FUNCTION advance_admission_epoch();
DROP TABLE admission_epoch;
