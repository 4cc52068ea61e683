-- Up Migration

-- OAuth 2.1 authorization for the MCP endpoint (issue 47): the service is its own authorization
-- server (domain/oauth/). Clients register dynamically (RFC 7591); a person's consent is a grant
-- (scopes, the vault mappings it may use, the resource it is bound to, RFC 8707); codes and tokens
-- belong to a grant. Only SHA-256 digests of codes and tokens are stored, like personal access tokens.
CREATE TABLE oauth_clients (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  -- What the client sends as client_id (hnp_cid_…): public, not a secret.
  client_id text NOT NULL UNIQUE CHECK (length(client_id) <= 100),
  client_name text NOT NULL CHECK (length(client_name) BETWEEN 1 AND 100),
  redirect_uris text[] NOT NULL CHECK (cardinality(redirect_uris) BETWEEN 1 AND 10),
  client_uri text CHECK (length(client_uri) <= 512),
  software_id text CHECK (length(software_id) <= 200),
  software_version text CHECK (length(software_version) <= 100),
  created_at timestamptz NOT NULL DEFAULT now()
);

-- A person's consent to one client: what it may do (scopes), on which mappings, for which resource.
CREATE TABLE oauth_grants (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  client_id uuid NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  scopes text[] NOT NULL CHECK (cardinality(scopes) >= 1),
  mapping_ids uuid[] NOT NULL CHECK (cardinality(mapping_ids) >= 1),
  resource text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at timestamptz,
  -- Why it ended: the person or the client revoked it, or a code or refresh token was replayed.
  revoked_reason text CHECK (revoked_reason IN ('revoked', 'refresh_token_reused', 'code_reused'))
);
CREATE INDEX oauth_grants_account_idx ON oauth_grants (account_id) WHERE revoked_at IS NULL;

-- Authorization codes: one use, a minute to live, bound to the redirect URI and the PKCE challenge.
CREATE TABLE oauth_authorization_codes (
  code_hash text PRIMARY KEY CHECK (code_hash ~ '^[0-9a-f]{64}$'),
  grant_id uuid NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
  redirect_uri text NOT NULL,
  code_challenge text NOT NULL CHECK (code_challenge ~ '^[A-Za-z0-9_-]{43}$'),
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);
CREATE INDEX oauth_authorization_codes_grant_idx ON oauth_authorization_codes (grant_id);

-- Access and refresh tokens. A refresh token is used once (used_at); a second use revokes the grant.
CREATE TABLE oauth_tokens (
  token_hash text PRIMARY KEY CHECK (token_hash ~ '^[0-9a-f]{64}$'),
  grant_id uuid NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('access', 'refresh')),
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);
CREATE INDEX oauth_tokens_grant_idx ON oauth_tokens (grant_id);

-- Down Migration
DROP TABLE oauth_tokens;
DROP TABLE oauth_authorization_codes;
DROP TABLE oauth_grants;
DROP TABLE oauth_clients;
