-- Up Migration

-- The console's CSRF token is now derived from the session secret (an HMAC keyed by it,
-- domain/console/sessions.ts), so the server can render it into every form without storing a second
-- secret; its digest is no longer kept.
ALTER TABLE console_sessions DROP COLUMN csrf_hash;

-- Down Migration
-- Sessions opened since cannot be given a digest of a token that was never stored: they end.
UPDATE console_sessions SET ended_at = now() WHERE ended_at IS NULL;
ALTER TABLE console_sessions ADD COLUMN csrf_hash text NOT NULL DEFAULT repeat('0', 64) CHECK (csrf_hash ~ '^[0-9a-f]{64}$');
