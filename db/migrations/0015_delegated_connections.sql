-- Up Migration

-- Delegated provider connections (docs/connections.md). An OAuth round trip is an attempt, run by
-- one workflow (workflows/oauth-connection.ts):
--   pending → completed (a connection was stored)
--   pending → failed    (denied consent, provider error, return target no longer registered…)
--   pending → expired   (the workflow's timer, or a callback after `expires_at`)
-- The 256-bit `state` is never stored, only its SHA-256; the PKCE verifier is sealed (AES-GCM,
-- bound to `attempt:<id>:verifier`) and cleared when the attempt ends, however it ends.
CREATE TABLE oauth_attempts (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  installation_id uuid NOT NULL REFERENCES product_installations (id) ON DELETE CASCADE,
  provider text NOT NULL DEFAULT 'google' CHECK (provider = 'google'),
  state_hash text NOT NULL UNIQUE CHECK (state_hash ~ '^[0-9a-f]{64}$'),
  code_verifier_sealed text,
  services text[] NOT NULL CHECK (cardinality(services) BETWEEN 1 AND 2 AND services <@ ARRAY['drive', 'classroom']),
  -- Our callback (the configured base URL + the callback path), sent again with the code exchange.
  redirect_uri text NOT NULL,
  -- The product's registered return origin or redirect URI it chose; the person is sent back there.
  return_target text NOT NULL,
  workflow_id text NOT NULL UNIQUE,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'completed', 'failed', 'expired')),
  failure_code text CHECK (failure_code IN ('oauth_state_expired', 'oauth_consent_denied', 'oauth_provider_error', 'oauth_return_target_mismatch',
                                            'connections_not_configured', 'internal_error')),
  connection_id uuid,
  -- Provenance: which credential started the round trip, in which request.
  created_by_principal_id uuid NOT NULL,
  created_request_id text NOT NULL,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  CHECK ((status = 'pending') = (finished_at IS NULL)),
  CHECK ((status = 'pending') = (code_verifier_sealed IS NOT NULL)),
  CHECK ((status = 'completed') = (connection_id IS NOT NULL)),
  CHECK ((status IN ('failed', 'expired')) = (failure_code IS NOT NULL))
);
CREATE INDEX oauth_attempts_installation_idx ON oauth_attempts (installation_id, created_at DESC);

-- A connection holds the tokens of one completed attempt, sealed with the secret box and bound to
-- the row (`connection:<id>:access`, `connection:<id>:refresh`), so a sealed value copied to
-- another row does not open. Revoking deletes both tokens; the row stays as the provenance.
CREATE TABLE provider_connections (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  installation_id uuid NOT NULL REFERENCES product_installations (id) ON DELETE CASCADE,
  attempt_id uuid NOT NULL UNIQUE REFERENCES oauth_attempts (id),
  provider text NOT NULL DEFAULT 'google' CHECK (provider = 'google'),
  services text[] NOT NULL CHECK (cardinality(services) BETWEEN 1 AND 2 AND services <@ ARRAY['drive', 'classroom']),
  granted_scopes text[] NOT NULL,
  state text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'revoked')),
  access_token_sealed text,
  refresh_token_sealed text,
  access_expires_at timestamptz,
  created_by_principal_id uuid NOT NULL,
  created_request_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  refreshed_at timestamptz,
  revoked_by_principal_id uuid,
  revoked_request_id text,
  revoked_at timestamptz,
  CHECK ((state = 'revoked') = (revoked_at IS NOT NULL)),
  CHECK ((state = 'active') = (access_token_sealed IS NOT NULL AND access_expires_at IS NOT NULL)),
  CHECK (state = 'active' OR refresh_token_sealed IS NULL)
);
CREATE INDEX provider_connections_installation_idx ON provider_connections (installation_id, created_at DESC, id DESC);

ALTER TABLE oauth_attempts ADD CONSTRAINT oauth_attempts_connection_fk FOREIGN KEY (connection_id) REFERENCES provider_connections (id);

-- Down Migration
ALTER TABLE oauth_attempts DROP CONSTRAINT oauth_attempts_connection_fk;
DROP TABLE provider_connections;
DROP TABLE oauth_attempts;
