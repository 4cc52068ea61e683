-- Up Migration

-- Reviewer console sessions (issue 16). A reviewer signs in once with a personal access token and
-- gets a session cookie instead; the session is bound to that token, so revoking or rotating it,
-- its expiry or the account leaving `active` ends the session too (domain/console/sessions.ts
-- re-checks all of them on every request). Only SHA-256 digests of the session secret and of the
-- CSRF token are kept; the personal access token itself is never stored here.
CREATE TABLE console_sessions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  -- The access token the session was exchanged from.
  token_id uuid NOT NULL REFERENCES access_tokens (id) ON DELETE CASCADE,
  session_hash text NOT NULL UNIQUE CHECK (session_hash ~ '^[0-9a-f]{64}$'),
  csrf_hash text NOT NULL CHECK (csrf_hash ~ '^[0-9a-f]{64}$'),
  -- Shown to the reviewer in a list of their sessions; informational, truncated, never secret.
  user_agent text CHECK (length(user_agent) <= 256),
  created_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  -- Absolute: from sign-in, never past the token's own expiry.
  expires_at timestamptz NOT NULL,
  ended_at timestamptz,
  CHECK (expires_at > created_at)
);
-- Live sessions of a token and of an account (ending them all on sign-out everywhere).
CREATE INDEX console_sessions_token_idx ON console_sessions (token_id) WHERE ended_at IS NULL;
CREATE INDEX console_sessions_account_idx ON console_sessions (account_id) WHERE ended_at IS NULL;

-- Down Migration
DROP TABLE console_sessions;
