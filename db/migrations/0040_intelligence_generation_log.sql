-- Up Migration
-- The event log of a generation (issue 48, docs/intelligence.md "Long generations"): what the plain
-- NDJSON answer streams, kept so any number of readers on any API can read it from an offset while it
-- is written and after. One row per generation (its status, the writer's last seq and when its events
-- expire) and one row per event. The generation's id is its reservation's (the receipt's id); a
-- released request run again under the same key is a new attempt of the same row and starts the log
-- over (nothing was generated or charged by the released one).
CREATE TABLE intelligence_generations (
  generation_id uuid PRIMARY KEY REFERENCES intelligence_reservations (id) ON DELETE CASCADE,
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  installation_id uuid NOT NULL REFERENCES product_installations (id) ON DELETE CASCADE,
  attempt integer NOT NULL DEFAULT 1 CHECK (attempt >= 1),
  status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
  -- Asked for with Prefer: respond-async (no connection holds it; only cancel stops it).
  background boolean NOT NULL DEFAULT false,
  -- The highest seq written; seqs are 1, 2, … with no gap, assigned by the one writer.
  last_seq integer NOT NULL DEFAULT 0 CHECK (last_seq >= 0),
  -- When a cancel was asked (idempotent: the first one stands).
  cancel_requested_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  -- Set when the generation finishes: after it the events are gone (410 generation_expired); the
  -- generation's status and receipt stay.
  events_expire_at timestamptz,
  CHECK ((status IN ('queued', 'running')) = (finished_at IS NULL))
);
-- The sweep finds expired logs in this order.
CREATE INDEX intelligence_generations_expiry_idx ON intelligence_generations (events_expire_at) WHERE events_expire_at IS NOT NULL;

CREATE TABLE intelligence_generation_events (
  generation_id uuid NOT NULL REFERENCES intelligence_generations (generation_id) ON DELETE CASCADE,
  seq integer NOT NULL CHECK (seq >= 1),
  type text NOT NULL CHECK (type IN ('ready', 'delta', 'done')),
  -- The event as the stream carries it, without its seq.
  payload jsonb NOT NULL,
  PRIMARY KEY (generation_id, seq)
);

-- Down Migration
DROP TABLE intelligence_generation_events;
DROP TABLE intelligence_generations;
