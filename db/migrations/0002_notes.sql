-- Up Migration
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- Live notes of hosted vaults. `path` sorts bytewise (COLLATE "C") so inventory order is stable
-- and independent of the server's locale; `path_key` (lower-cased in the application, Unicode
-- aware) makes two paths that differ only by case collide.
CREATE TABLE notes (
  vault_id uuid NOT NULL REFERENCES vaults (id) ON DELETE CASCADE,
  path text COLLATE "C" NOT NULL,
  path_key text NOT NULL,
  title text NOT NULL,
  content text NOT NULL,
  revision text NOT NULL CHECK (revision ~ '^sha256:[0-9a-f]{64}$'),
  size_bytes integer NOT NULL CHECK (size_bytes >= 0),
  frontmatter jsonb,
  links jsonb NOT NULL DEFAULT '[]'::jsonb,
  search tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('simple', title), 'A') || setweight(to_tsvector('simple', content), 'B')
  ) STORED,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (vault_id, path)
);
CREATE UNIQUE INDEX notes_path_key_idx ON notes (vault_id, path_key);
CREATE INDEX notes_search_idx ON notes USING gin (search);
CREATE INDEX notes_path_trgm_idx ON notes USING gin (path gin_trgm_ops);

-- Recoverable trash: a deleted note's last state, written in the same transaction that removes it.
CREATE TABLE note_trash (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  vault_id uuid NOT NULL REFERENCES vaults (id) ON DELETE CASCADE,
  path text COLLATE "C" NOT NULL,
  title text NOT NULL,
  content text NOT NULL,
  revision text NOT NULL,
  size_bytes integer NOT NULL,
  frontmatter jsonb,
  links jsonb NOT NULL,
  note_created_at timestamptz NOT NULL,
  deleted_at timestamptz NOT NULL DEFAULT now(),
  deleted_by_account_id uuid REFERENCES accounts (id),
  restored_at timestamptz
);
CREATE INDEX note_trash_vault_idx ON note_trash (vault_id, deleted_at DESC, id);

-- Provenance events. Writers hold the vault row lock while they take an id, so within a vault ids
-- are assigned in commit order and `since` cursors never skip a late-committing event.
CREATE TABLE note_events (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  vault_id uuid NOT NULL REFERENCES vaults (id) ON DELETE CASCADE,
  mapping_id uuid NOT NULL,
  type text NOT NULL CHECK (type IN ('note.created', 'note.replaced', 'note.deleted', 'note.restored')),
  -- clock time of the write (taken under the vault lock), not the transaction's start
  occurred_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  actor_type text NOT NULL CHECK (actor_type IN ('account', 'service_principal', 'forge')),
  actor_id uuid,
  path text COLLATE "C" NOT NULL,
  before_revision text,
  after_revision text,
  transaction_id uuid,
  idempotency_key text,
  request_id text,
  source text NOT NULL,
  trash_id uuid
);
CREATE INDEX note_events_vault_idx ON note_events (vault_id, id);

-- Idempotency records of applied writes, keyed by the credential's account, the route and the
-- mapping. Only successful applies are stored; they are replayed until expires_at.
CREATE TABLE idempotency_records (
  account_id uuid NOT NULL,
  route text NOT NULL,
  scope text NOT NULL,
  key text NOT NULL,
  fingerprint text NOT NULL,
  response_status integer NOT NULL,
  response_body jsonb NOT NULL,
  response_etag text,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (account_id, route, scope, key)
);
CREATE INDEX idempotency_records_expiry_idx ON idempotency_records (expires_at);

-- Request allowances: one row per account and interface holding the current calendar month's and
-- the current minute's counts, so a single conditional upsert checks and counts both atomically.
CREATE TABLE usage_counters (
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  interface text NOT NULL,
  month_start timestamptz NOT NULL,
  month_count integer NOT NULL,
  minute_start timestamptz NOT NULL,
  minute_count integer NOT NULL,
  PRIMARY KEY (account_id, interface)
);

-- Down Migration
DROP TABLE usage_counters, idempotency_records, note_events, note_trash, notes;
