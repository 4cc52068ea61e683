-- Up Migration

-- Retry-safe writes at Google (docs/connections.md). Neither Drive's files.create nor Classroom's
-- courseWork.create takes a request id, so the intent is recorded under the caller's
-- Idempotency-Key before the call: Drive creates under a file id reserved once (files.generateIds),
-- so a retry can only meet its own file; a Classroom assignment carries a marker, so a retry after
-- an ambiguous failure finds the assignment it made instead of making a second one.
CREATE TABLE connection_write_intents (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  installation_id uuid NOT NULL REFERENCES product_installations (id) ON DELETE CASCADE,
  connection_id uuid NOT NULL REFERENCES provider_connections (id) ON DELETE CASCADE,
  operation text NOT NULL CHECK (operation IN ('drive.create', 'classroom.assignment.create')),
  idempotency_key_hash text NOT NULL CHECK (idempotency_key_hash ~ '^[0-9a-f]{64}$'),
  request_fingerprint text NOT NULL CHECK (request_fingerprint ~ '^[0-9a-f]{64}$'),
  -- The reserved Drive file id, or the Classroom marker: what makes a retry meet its own object.
  provider_handle text NOT NULL,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done')),
  -- The provider object lineage answered (ids, version, title): no content, no token.
  result jsonb,
  created_request_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  done_at timestamptz,
  UNIQUE (installation_id, operation, idempotency_key_hash),
  CHECK ((state = 'done') = (result IS NOT NULL))
);

-- Down Migration
DROP TABLE connection_write_intents;
