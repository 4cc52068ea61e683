-- Up Migration

-- The budget is a ceiling (issue 24): a request is never charged more than the bound it reserved,
-- whatever the provider reports. What the provider's reported usage would cost beyond that bound is
-- recorded as an overrun beside the charge, for operators (ops `usage overruns`, the receipt).
ALTER TABLE intelligence_reservations
  -- What the provider's reported usage prices at (null: no usage reported, or nothing charged).
  ADD COLUMN reported_cost_microdollars bigint CHECK (reported_cost_microdollars >= 0),
  -- max(0, reported − reserved): what the service absorbed instead of the organization's budget.
  ADD COLUMN overrun_microdollars bigint NOT NULL DEFAULT 0 CHECK (overrun_microdollars >= 0);

-- The ceiling as the database states it. NOT VALID: rows settled before this migration are not
-- re-checked (an installation upgraded from an older release may hold such rows); every row written
-- from now on is.
ALTER TABLE intelligence_reservations
  ADD CONSTRAINT intelligence_reservations_charge_within_reservation
  CHECK (charged_microdollars IS NULL OR charged_microdollars <= reserved_microdollars) NOT VALID;

-- Overruns are rare; operators list them by organization, newest first (listReceipts' order).
CREATE INDEX intelligence_reservations_overrun_idx ON intelligence_reservations (organization_id, created_at DESC, id DESC)
  WHERE overrun_microdollars > 0;

-- Down Migration
DROP INDEX intelligence_reservations_overrun_idx;
ALTER TABLE intelligence_reservations DROP CONSTRAINT intelligence_reservations_charge_within_reservation;
ALTER TABLE intelligence_reservations DROP COLUMN overrun_microdollars, DROP COLUMN reported_cost_microdollars;
