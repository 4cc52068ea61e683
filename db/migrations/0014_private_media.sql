-- Up Migration

-- Private audio media (docs/media.md). A record per upload, owned by one installation of one
-- organization; the bytes live in a BlobStore (domain/media/blob-store.ts) under `blob_key`, which
-- never leaves the service. States:
--   storing → stored → deleting → deleted
--   storing → (refused or failed: the row is removed with its quota; nothing is left behind)
-- A `storing` or `deleting` row left by a crashed process is finished by the worker's media sweep.
-- Deleted rows stay as tombstones: they are the provenance of the deletion and keep the
-- Idempotency-Key of the upload spent.
CREATE TABLE media_objects (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  installation_id uuid NOT NULL REFERENCES product_installations (id) ON DELETE CASCADE,
  idempotency_key_hash text NOT NULL CHECK (idempotency_key_hash ~ '^[0-9a-f]{64}$'),
  request_fingerprint text NOT NULL CHECK (request_fingerprint ~ '^[0-9a-f]{64}$'),
  reference text NOT NULL CHECK (length(reference) BETWEEN 1 AND 200),
  state text NOT NULL DEFAULT 'storing' CHECK (state IN ('storing', 'stored', 'deleting', 'deleted')),
  storage_backend text NOT NULL CHECK (storage_backend IN ('postgres', 's3')),
  blob_key text NOT NULL UNIQUE,
  media_type text NOT NULL CHECK (media_type IN ('audio/webm', 'audio/ogg', 'audio/mp4')),
  container text NOT NULL CHECK (container IN ('webm', 'ogg', 'mp4')),
  codec text,
  size_bytes integer NOT NULL CHECK (size_bytes BETWEEN 1 AND 3145728),
  sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  declared_duration_ms integer NOT NULL CHECK (declared_duration_ms BETWEEN 1 AND 120000),
  container_duration_ms integer CHECK (container_duration_ms >= 0),
  duration_source text NOT NULL CHECK (duration_source IN ('container-header', 'cluster-walk', 'granule-position', 'none')),
  -- Provenance: which credential uploaded and deleted it, in which request.
  created_by_principal_id uuid NOT NULL,
  created_request_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  stored_at timestamptz,
  deleted_by_principal_id uuid,
  deleted_request_id text,
  deleted_at timestamptz,
  UNIQUE (installation_id, idempotency_key_hash),
  CHECK ((state = 'stored') <= (stored_at IS NOT NULL)),
  CHECK ((state = 'deleted') = (deleted_at IS NOT NULL))
);
-- The installation's listing, newest first; the sweep's look-up of unfinished rows.
CREATE INDEX media_objects_installation_idx ON media_objects (installation_id, created_at DESC, id DESC) WHERE state = 'stored';
CREATE INDEX media_objects_unfinished_idx ON media_objects (created_at) WHERE state IN ('storing', 'deleting');

-- What each organization's media holds against `mediaStorageBytes`: the sizes of its storing,
-- stored and deleting objects. An upload adds its size with one conditional upsert (never past the
-- limit, whatever runs concurrently); a refused or failed upload and a finished deletion subtract it.
CREATE TABLE organization_media_storage (
  organization_id uuid PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
  used_bytes bigint NOT NULL CHECK (used_bytes >= 0)
);

-- The embedded BlobStore (domain/media/postgres-blob-store.ts). EXTERNAL storage keeps the bytes
-- uncompressed out of line (audio does not compress), so a Range read fetches only its chunks.
CREATE TABLE media_blobs (
  blob_key text PRIMARY KEY,
  bytes bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE media_blobs ALTER COLUMN bytes SET STORAGE EXTERNAL;

-- Down Migration
DROP TABLE media_blobs;
DROP TABLE organization_media_storage;
DROP TABLE media_objects;
