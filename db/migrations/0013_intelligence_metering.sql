-- Up Migration

-- Metered intelligence (docs/intelligence.md). The ledger lives here in integer microdollars
-- (1,000,000 = US$1); the lifecycle of each request lives in a Temporal workflow
-- (workflows/intelligence-usage.ts) that holds its expiry timer and every transition after dispatch.

-- One row per metered request: the business key is (installation, Idempotency-Key). The state
-- follows the spec's reservation table:
--   reserved → dispatched → settled | billable_failure
--   reserved | dispatched (before the provider accepted) → released
--   reserved (never dispatched, timer fired) → expired
-- A released or expired row may be reserved again with the same key and the same body (nothing was
-- generated or charged); `attempt` counts those.
CREATE TABLE intelligence_reservations (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  installation_id uuid NOT NULL REFERENCES product_installations (id) ON DELETE CASCADE,
  operation text NOT NULL CHECK (length(operation) BETWEEN 1 AND 100),
  idempotency_key_hash text NOT NULL CHECK (idempotency_key_hash ~ '^[0-9a-f]{64}$'),
  request_fingerprint text NOT NULL CHECK (request_fingerprint ~ '^[0-9a-f]{64}$'),
  attempt integer NOT NULL DEFAULT 1 CHECK (attempt >= 1),
  workflow_id text NOT NULL,
  state text NOT NULL DEFAULT 'reserved'
    CHECK (state IN ('reserved', 'dispatched', 'settled', 'released', 'billable_failure', 'expired')),
  -- The month whose budget this request counts against (UTC), fixed when it is reserved.
  month_start timestamptz NOT NULL,
  reserved_microdollars bigint NOT NULL CHECK (reserved_microdollars >= 0),
  charged_microdollars bigint CHECK (charged_microdollars >= 0),
  model text,
  input_tokens integer CHECK (input_tokens >= 0),
  output_tokens integer CHECK (output_tokens >= 0),
  images integer CHECK (images >= 0),
  outcome_code text,
  -- An undispatched reservation is released by the workflow's timer at this instant.
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  dispatched_at timestamptz,
  finished_at timestamptz,
  UNIQUE (installation_id, idempotency_key_hash),
  CHECK ((state IN ('reserved', 'dispatched')) = (finished_at IS NULL))
);
CREATE INDEX intelligence_reservations_org_idx ON intelligence_reservations (organization_id, created_at DESC, id DESC);
CREATE INDEX intelligence_reservations_installation_idx ON intelligence_reservations (installation_id, created_at DESC, id DESC);

-- The stored answer of a settled request, replayed for a retry with the same key. Kept out of
-- Temporal's history (it may be learner-facing text or an image) and out of every log.
CREATE TABLE intelligence_results (
  reservation_id uuid PRIMARY KEY REFERENCES intelligence_reservations (id) ON DELETE CASCADE,
  result jsonb NOT NULL,
  media_type text,
  bytes bytea,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- What an organization (and each installation) has committed this month: reserved amounts of
-- open requests plus the charges of settled and billable ones. A reservation adds to both rows with
-- conditional updates (organization first, then installation) so concurrent callers never pass the
-- budget or the sublimit; a settlement replaces the reserved amount with the charge.
CREATE TABLE organization_intelligence_spend (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  month_start timestamptz NOT NULL,
  committed_microdollars bigint NOT NULL CHECK (committed_microdollars >= 0),
  PRIMARY KEY (organization_id, month_start)
);
CREATE TABLE installation_intelligence_spend (
  installation_id uuid NOT NULL REFERENCES product_installations (id) ON DELETE CASCADE,
  month_start timestamptz NOT NULL,
  committed_microdollars bigint NOT NULL CHECK (committed_microdollars >= 0),
  PRIMARY KEY (installation_id, month_start)
);
-- Executions in flight per organization (`maxConcurrentIntelligence`): reserved or dispatched.
CREATE TABLE organization_intelligence_slots (
  organization_id uuid PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
  in_flight integer NOT NULL CHECK (in_flight >= 0)
);

-- Down Migration
DROP TABLE organization_intelligence_slots;
DROP TABLE installation_intelligence_spend;
DROP TABLE organization_intelligence_spend;
DROP TABLE intelligence_results;
DROP TABLE intelligence_reservations;
