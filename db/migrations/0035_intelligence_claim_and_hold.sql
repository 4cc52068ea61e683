-- Up Migration
-- reserve() in one statement (domain/intelligence/ledger.ts; issue 49). A request's reservation
-- row and its hold on the organization's three counters (the month's spend, the concurrency slot,
-- the installation's month) were a transaction of four round trips, and the counters' row locks were
-- held from the hold's statement through the client's COMMIT: every caller of one organization
-- queued behind a round trip to the client. As one statement of its own (autocommit) the locks are
-- taken and released inside the server, at its commit. What the statement does is what the
-- transaction did, in the same lock order (the reservation row, then the organization's month, its
-- slot, the installation's month; completeReservation's order): a counter that cannot move refuses
-- the whole statement with SQLSTATE HNR01, so nothing of it stays (the claim included), and its
-- DETAIL carries the hold's row for the refusal's answer.

-- The hold of `cost` on the organization's month, its slot and the installation's month, for a
-- reservation of `month_start`. Each counter moves only within its limit and answers NULL when it
-- cannot (the caller refuses and rolls back); `budget` NULL or 0 means the organization has none.
-- Read in this order by the final SELECT, the CTEs run in this order (data-modifying CTEs that
-- nothing reads run in no stated order, and two orders deadlock). PL/pgSQL, not SQL: it keeps the
-- statement's plan for the session (Postgres 15 plans a SQL function's statements at every call).
CREATE FUNCTION intelligence_hold(p_organization_id uuid, p_installation_id uuid, p_month_start timestamptz, p_cost bigint, p_default_max_concurrent integer,
                                  OUT budget bigint, OUT "maxConcurrent" bigint, OUT sublimit bigint, OUT "resetsAt" timestamptz,
                                  OUT org bigint, OUT "inFlight" integer, OUT installation bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  WITH settings AS (
    SELECT (o.settings #>> '{productRuntime,intelligenceBudgetMicrodollarsMonthly}')::bigint AS budget,
           coalesce((o.settings #>> '{productRuntime,maxConcurrentIntelligence}')::integer, p_default_max_concurrent) AS max_concurrent,
           (o.settings #>> '{productRuntime,maxConcurrentIntelligence}')::bigint AS "maxConcurrent",
           (i.configuration #>> '{productRuntime,intelligenceBudgetMicrodollarsMonthly}')::bigint AS sublimit,
           p_month_start + interval '1 month' AS "resetsAt"
      FROM product_installations i JOIN organizations o ON o.id = i.organization_id
     WHERE i.id = p_installation_id
  ), org AS (
    INSERT INTO organization_intelligence_spend AS s (organization_id, month_start, committed_microdollars)
    SELECT p_organization_id, p_month_start, p_cost FROM settings WHERE p_cost <= settings.budget
    ON CONFLICT (organization_id, month_start) DO UPDATE SET committed_microdollars = s.committed_microdollars + EXCLUDED.committed_microdollars
     WHERE s.committed_microdollars + EXCLUDED.committed_microdollars <= (SELECT budget FROM settings)
    RETURNING s.committed_microdollars AS committed
  ), slot AS (
    INSERT INTO organization_intelligence_slots AS s (organization_id, in_flight)
    SELECT p_organization_id, 1 FROM settings WHERE 1 <= settings.max_concurrent
    ON CONFLICT (organization_id) DO UPDATE SET in_flight = s.in_flight + 1 WHERE s.in_flight + 1 <= (SELECT max_concurrent FROM settings)
    RETURNING s.in_flight
  ), installation AS (
    -- The installation's row always counts (so a sublimit set later sees this month's spend); it only refuses under a sublimit.
    INSERT INTO installation_intelligence_spend AS s (installation_id, month_start, committed_microdollars)
    SELECT p_installation_id, p_month_start, p_cost FROM settings WHERE settings.sublimit IS NULL OR p_cost <= settings.sublimit
    ON CONFLICT (installation_id, month_start) DO UPDATE SET committed_microdollars = s.committed_microdollars + EXCLUDED.committed_microdollars
     WHERE (SELECT sublimit FROM settings) IS NULL OR s.committed_microdollars + EXCLUDED.committed_microdollars <= (SELECT sublimit FROM settings)
    RETURNING s.committed_microdollars AS committed
  )
  SELECT settings.budget, settings."maxConcurrent", settings.sublimit, settings."resetsAt",
         (SELECT committed FROM org), (SELECT in_flight FROM slot), (SELECT committed FROM installation)
    INTO budget, "maxConcurrent", sublimit, "resetsAt", org, "inFlight", installation
    FROM settings;
END
$$;

-- A key not seen before, claimed and held: its new reservation row, or no row when the key exists
-- (nothing inserted, nothing held: the caller judges the key in a transaction of its own). A hold
-- that does not fit raises HNR01 with the hold's row and the claim's month as JSON in DETAIL.
CREATE FUNCTION intelligence_claim_and_hold(p_id uuid, p_organization_id uuid, p_installation_id uuid, p_operation text, p_key_hash text,
                                            p_fingerprint text, p_workflow_id text, p_cost bigint, p_ttl_ms bigint, p_default_max_concurrent integer)
RETURNS SETOF intelligence_reservations
LANGUAGE plpgsql AS $$
DECLARE
  claimed intelligence_reservations;
  held record;
BEGIN
  INSERT INTO intelligence_reservations AS r
    (id, organization_id, installation_id, operation, idempotency_key_hash, request_fingerprint, workflow_id, month_start, reserved_microdollars, expires_at)
  VALUES (p_id, p_organization_id, p_installation_id, p_operation, p_key_hash, p_fingerprint, p_workflow_id,
          date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', p_cost, now() + p_ttl_ms * interval '1 millisecond')
  ON CONFLICT (installation_id, idempotency_key_hash) DO NOTHING
  RETURNING r.* INTO claimed;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  SELECT * INTO held FROM intelligence_hold(p_organization_id, p_installation_id, claimed.month_start, p_cost, p_default_max_concurrent);
  IF coalesce(held.budget, 0) = 0 OR held.org IS NULL OR held."inFlight" IS NULL OR held.installation IS NULL THEN
    RAISE EXCEPTION 'intelligence hold refused' USING ERRCODE = 'HNR01', DETAIL = (to_jsonb(held) || jsonb_build_object('monthStart', claimed.month_start))::text;
  END IF;
  RETURN NEXT claimed;
END
$$;

-- Down Migration
DROP FUNCTION intelligence_claim_and_hold(uuid, uuid, uuid, text, text, text, text, bigint, bigint, integer);
DROP FUNCTION intelligence_hold(uuid, uuid, timestamptz, bigint, integer);
