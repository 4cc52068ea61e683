// The metering ledger (docs/intelligence.md): reservations, settlements and the spend they commit,
// in integer microdollars. Every transition is a compare-and-set on the reservation's state, so a
// transition repeated (an activity retried, a timer racing a completion) changes nothing twice.
//
// The budget is a ceiling: a request is charged at most what it reserved, and the reservation
// only exists if it fitted the budget and the sublimit, so committed spend never passes either,
// whatever a provider or a proxy in front of it reports. Reported usage priced above the
// reservation is recorded as the request's overrun (receipt, `ops usage overruns`), absorbed by the
// service, and the database refuses a charge above the reservation (migration 0019).
//
// Lock order, the same in every transaction so none can deadlock: the reservation row, then the
// organization's spend row, then its slots row, then the installation's spend row.
import { sql } from 'slonik';
import type { CommonQueryMethods, DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import { AppError } from '../errors.ts';
import { isoTimestamp } from '../../db/row-schemas.ts';
import { decodeCursor, encodeCursor } from '../cursor.ts';
import type { IntelligenceBudget, UsageReceipt } from '@hosted-notes/runtime-sdk';

type Db = CommonQueryMethods;

/** `maxConcurrentIntelligence` when the organization's settings name none (the spec leaves the default to us). */
export const DEFAULT_MAX_CONCURRENT_INTELLIGENCE = 8;

export const reservationStates = ['reserved', 'dispatched', 'settled', 'released', 'billable_failure', 'expired'] as const;
export type ReservationState = (typeof reservationStates)[number];

const reservationRowSchema = z.object({
  id: z.uuid(),
  organizationId: z.uuid(),
  installationId: z.uuid(),
  operation: z.string(),
  requestFingerprint: z.string(),
  workflowId: z.string(),
  state: z.enum(reservationStates),
  monthStart: isoTimestamp,
  reservedMicrodollars: z.coerce.number(),
  chargedMicrodollars: z.coerce.number().nullable(),
  reportedCostMicrodollars: z.coerce.number().nullable(),
  overrunMicrodollars: z.coerce.number(),
  model: z.string().nullable(),
  inputTokens: z.number().nullable(),
  outputTokens: z.number().nullable(),
  images: z.number().nullable(),
  outcomeCode: z.string().nullable(),
  expiresAt: isoTimestamp,
  createdAt: isoTimestamp,
  dispatchedAt: isoTimestamp.nullable(),
  finishedAt: isoTimestamp.nullable(),
});
export type Reservation = z.infer<typeof reservationRowSchema>;

const columns = sql.fragment`
  r.id, r.organization_id AS "organizationId", r.installation_id AS "installationId", r.operation,
  r.request_fingerprint AS "requestFingerprint", r.workflow_id AS "workflowId", r.state, r.month_start AS "monthStart",
  r.reserved_microdollars AS "reservedMicrodollars", r.charged_microdollars AS "chargedMicrodollars",
  r.reported_cost_microdollars AS "reportedCostMicrodollars", r.overrun_microdollars AS "overrunMicrodollars", r.model,
  r.input_tokens AS "inputTokens", r.output_tokens AS "outputTokens", r.images, r.outcome_code AS "outcomeCode",
  r.expires_at AS "expiresAt", r.created_at AS "createdAt", r.dispatched_at AS "dispatchedAt", r.finished_at AS "finishedAt"`;

const currentMonth = sql.fragment`(date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')`;

export type ReserveRequest = {
  /** The new row's id (a fresh UUID; a re-reserved released/expired key keeps its row's id). */
  id: string;
  organizationId: string;
  installationId: string;
  operation: string;
  /** sha256 of the Idempotency-Key (the key itself is never stored). */
  keyHash: string;
  /** sha256 of the operation and its canonical body: the same key with another body is refused. */
  fingerprint: string;
  costMicrodollars: number;
  /** The workflow already started for this attempt; its timer releases the reservation if it is never dispatched. */
  workflowId: string;
  /** When the workflow's timer fires (ms from now, as the workflow was told). */
  ttlMs: number;
  /**
   * The latest instant (epoch ms) the reservation may still be made: before the workflow's timer by
   * a margin, so a reservation can never appear after the timer found nothing to release.
   */
  reserveBy: number;
};

export type ReserveOutcome =
  /** Held: dispatch it (markDispatched) and complete it through the workflow. */
  | { kind: 'reserved'; reservation: Reservation }
  /** The key's request already settled: replay its stored result, no model call. */
  | { kind: 'settled'; reservation: Reservation };

const budgetRowSchema = z.object({
  budget: z.coerce.number().nullable(),
  maxConcurrent: z.coerce.number().nullable(),
  sublimit: z.coerce.number().nullable(),
  resetsAt: isoTimestamp,
});

/** Nothing is held or charged, and the same key may be sent again at once: the service was slow, not the request wrong. */
const reservationExpired = (detail?: string) => new AppError('intelligence_reservation_expired', detail, { headers: { 'retry-after': '1' } });

/**
 * Reserves the maximum bounded cost of one request, atomically against the organization's monthly
 * budget, its concurrent executions and the installation's sublimit, or says why not. A key seen
 * before is judged first: another body is 422, an open request 409, a settled one is replayed, a
 * billable failure stays failed; a released or expired one (nothing generated or charged) may run again.
 *
 * A key not seen before (every request but a retry) is claimed and held in one statement of its own
 * (`intelligence_claim_and_hold`, migration 0035): the organization's counter rows are locked and
 * released inside Postgres, never across a round trip to this process, which is what bounds how
 * many requests of one organization reserve per second. A key seen before is read, judged and
 * re-claimed in a transaction, and held by the same `intelligence_hold`.
 */
export async function reserve(db: Db & { transaction: DatabaseTransactionConnection['transaction'] }, r: ReserveRequest): Promise<ReserveOutcome> {
  if (Date.now() > r.reserveBy) throw reservationExpired('The reservation could not be made before its workflow timer; retry with the same key.');
  const claimed = await claimAndHold(db, r);
  if (claimed) return { kind: 'reserved', reservation: claimed };
  return db.transaction(async (tx) => {
    const existing = await tx.one(sql.type(reservationRowSchema)`
      SELECT ${columns} FROM intelligence_reservations r
       WHERE r.installation_id = ${r.installationId} AND r.idempotency_key_hash = ${r.keyHash}
       FOR UPDATE`);
    if (existing.operation !== r.operation || existing.requestFingerprint !== r.fingerprint) throw new AppError('idempotency_key_reused');
    if (existing.state === 'reserved' || existing.state === 'dispatched') {
      throw new AppError('idempotency_in_flight', undefined, { headers: { 'retry-after': String(IN_FLIGHT_RETRY_AFTER_SECONDS) } });
    }
    if (existing.state === 'settled') return { kind: 'settled', reservation: existing };
    if (existing.state === 'billable_failure') {
      throw new AppError('intelligence_request_failed', undefined, { extensions: { receiptId: existing.id, outcomeCode: existing.outcomeCode } });
    }
    // released or expired: nothing was generated or charged, so the same request may run again.
    if (Date.now() > r.reserveBy) throw reservationExpired('The reservation could not be made before its workflow timer; retry with the same key.');
    const reservation = await tx.one(sql.type(reservationRowSchema)`
      UPDATE intelligence_reservations r
         SET state = 'reserved', attempt = r.attempt + 1, workflow_id = ${r.workflowId}, month_start = ${currentMonth},
             reserved_microdollars = ${r.costMicrodollars}, charged_microdollars = NULL, reported_cost_microdollars = NULL,
             overrun_microdollars = 0, model = NULL, input_tokens = NULL,
             output_tokens = NULL, images = NULL, outcome_code = NULL, expires_at = now() + ${r.ttlMs} * interval '1 millisecond',
             dispatched_at = NULL, finished_at = NULL
       WHERE r.id = ${existing.id}
      RETURNING ${columns}`);
    const held = await tx.one(sql.type(heldRowSchema)`
      SELECT * FROM intelligence_hold(${reservation.organizationId}, ${reservation.installationId}, ${reservation.monthStart},
                                      ${reservation.reservedMicrodollars}, ${DEFAULT_MAX_CONCURRENT_INTELLIGENCE})`);
    // A refusal throws: the transaction rolls back the counters that moved and the re-claim.
    await judgeHeld(tx, reservation, held);
    return { kind: 'reserved', reservation };
  });
}

/** The hold's row (`intelligence_hold`): the limits, and each counter's new value or NULL where it could not move. */
const heldRowSchema = budgetRowSchema.extend({
  org: z.coerce.number().nullable(),
  inFlight: z.number().nullable(),
  installation: z.coerce.number().nullable(),
});
type Held = z.infer<typeof heldRowSchema>;

/** What `intelligence_claim_and_hold` raises when the hold does not fit: the hold's row and the claim's month, as JSON in DETAIL. */
const HOLD_REFUSED = 'HNR01';
const refusedHoldSchema = heldRowSchema.extend({ monthStart: isoTimestamp });

/**
 * A key not seen before: its reservation row, claimed and held in one statement; or null when the
 * key exists (nothing inserted, nothing held). A hold that does not fit rolls the whole statement
 * back (the claim too) and is refused here as a transaction's would be.
 */
async function claimAndHold(db: Db, r: ReserveRequest): Promise<Reservation | null> {
  let claimed: Reservation | null;
  try {
    claimed = await db.maybeOne(sql.type(reservationRowSchema)`
      SELECT ${columns} FROM intelligence_claim_and_hold(${r.id}, ${r.organizationId}, ${r.installationId}, ${r.operation}, ${r.keyHash}, ${r.fingerprint},
                                                         ${r.workflowId}, ${r.costMicrodollars}, ${r.ttlMs}, ${DEFAULT_MAX_CONCURRENT_INTELLIGENCE}) r`);
  } catch (error) {
    const { code, detail } = error as { code?: unknown; detail?: unknown };
    if (code !== HOLD_REFUSED || typeof detail !== 'string') throw error;
    const { monthStart, ...held } = refusedHoldSchema.parse(JSON.parse(detail));
    await judgeHeld(db, { id: r.id, organizationId: r.organizationId, installationId: r.installationId, monthStart, reservedMicrodollars: r.costMicrodollars }, held);
    throw new Error(`intelligence_claim_and_hold refused a hold that judgeHeld admits: ${detail}`);
  }
  return claimed;
}

type HeldRequest = Pick<Reservation, 'id' | 'organizationId' | 'installationId' | 'monthStart' | 'reservedMicrodollars'>;

/** Refuses a hold a counter did not move for (the caller's transaction or statement then undoes what moved), or returns. */
async function judgeHeld(db: Db, reservation: HeldRequest, held: Held): Promise<void> {
  const cost = reservation.reservedMicrodollars;
  if (!held.budget) {
    throw new AppError('intelligence_budget_missing', 'The organization has no intelligence budget (settings.productRuntime.intelligenceBudgetMicrodollarsMonthly); missing or zero fails closed.');
  }
  const refusal = async (code: 'intelligence_budget_exhausted' | 'intelligence_sublimit_exhausted', level: 'organization' | 'installation', limit: number) => {
    const { committed, held: inFlight } = await commitmentOf(db, level, reservation);
    const shortfall = shortfallOf({ limit, committed, held: inFlight, required: cost });
    const retryAfter =
      shortfall === 'held' ? IN_FLIGHT_RETRY_AFTER_SECONDS : shortfall === 'spent' ? Math.max(1, Math.ceil((Date.parse(held.resetsAt) - Date.now()) / 1000)) : null;
    const what = level === 'organization' ? "the organization's monthly budget" : "the installation's monthly sublimit";
    return new AppError(code, shortfallDetail[shortfall](what), {
      extensions: { limitMicrodollars: limit, committedMicrodollars: committed, heldMicrodollars: inFlight, requiredMicrodollars: cost, shortfall, resetsAt: held.resetsAt },
      ...(retryAfter === null ? {} : { headers: { 'retry-after': String(retryAfter) } }),
    });
  };
  // Refused in order; the counters that moved move back with the transaction or statement.
  if (held.org === null) throw await refusal('intelligence_budget_exhausted', 'organization', held.budget);
  if (held.inFlight === null) {
    const maxConcurrent = held.maxConcurrent ?? DEFAULT_MAX_CONCURRENT_INTELLIGENCE;
    throw new AppError('intelligence_concurrency_exhausted', `At most ${maxConcurrent} intelligence executions run at once for this organization.`, {
      extensions: { maxConcurrent },
      headers: { 'retry-after': '1' },
    });
  }
  if (held.installation === null) throw await refusal('intelligence_sublimit_exhausted', 'installation', held.sublimit ?? 0);
}

/**
 * Why a request does not fit, which decides whether waiting helps:
 * - `held`: capacity is held by requests in flight; they settle (at most at what they hold) or are
 *   released within seconds to minutes, after which this request fits: retry shortly;
 * - `spent`: this month's charges alone leave too little: nothing frees before the month turns;
 * - `request_exceeds_limit`: the request's bound is above the whole limit: no wait helps; ask for
 *   fewer output tokens or a smaller input.
 */
export type Shortfall = 'held' | 'spent' | 'request_exceeds_limit';

/** Retry-After of a `held` shortfall: long enough not to spin, short beside a generation's seconds. */
export const IN_FLIGHT_RETRY_AFTER_SECONDS = 2;

export function shortfallOf(f: { limit: number; committed: number; held: number; required: number }): Shortfall {
  if (f.required > f.limit) return 'request_exceeds_limit';
  return f.limit - (f.committed - f.held) >= f.required ? 'held' : 'spent';
}

const shortfallDetail: Record<Shortfall, (what: string) => string> = {
  held: (what) => `Requests in flight hold the rest of ${what}; retry after Retry-After seconds, when they have settled.`,
  spent: (what) => `This month's charges leave too little of ${what} for this request's maximum cost; it resets at resetsAt.`,
  request_exceeds_limit: (what) => `This request's maximum cost is above ${what}; ask for fewer output tokens or send less input.`,
};

const commitmentRow = z.object({ committed: z.coerce.number(), held: z.coerce.number() });

/**
 * The month's committed spend at this level and the part of it held by other requests in flight
 * (reserved or dispatched: their bound, not yet a charge). Only read on a refusal.
 */
async function commitmentOf(db: Db, level: 'organization' | 'installation', r: Pick<Reservation, 'id' | 'organizationId' | 'installationId' | 'monthStart'>): Promise<{ committed: number; held: number }> {
  const owner = level === 'organization' ? sql.fragment`organization_id = ${r.organizationId}` : sql.fragment`installation_id = ${r.installationId}`;
  const spend = level === 'organization' ? sql.identifier(['organization_intelligence_spend']) : sql.identifier(['installation_intelligence_spend']);
  return db.one(sql.type(commitmentRow)`
    SELECT coalesce((SELECT committed_microdollars FROM ${spend} WHERE ${owner} AND month_start = ${r.monthStart}), 0) AS committed,
           coalesce((SELECT sum(reserved_microdollars) FROM intelligence_reservations
                      WHERE ${owner} AND month_start = ${r.monthStart} AND state IN ('reserved', 'dispatched') AND id <> ${r.id}), 0) AS held`);
}

/**
 * reserved → dispatched, just before the provider is called: from here on an interruption is
 * billable. Refused when the workflow's timer already released the reservation.
 */
export async function markDispatched(db: Db, workflowId: string): Promise<Reservation> {
  const row = await db.maybeOne(sql.type(reservationRowSchema)`
    UPDATE intelligence_reservations r SET state = 'dispatched', dispatched_at = now()
     WHERE r.workflow_id = ${workflowId} AND r.state = 'reserved'
    RETURNING ${columns}`);
  if (!row) throw reservationExpired();
  return row;
}

/**
 * How a request ended, as the workflow records it. `costMicrodollars` is what the provider's
 * reported usage prices at (null: none reported); the charge is that, never above the reservation.
 */
export type Completion =
  /** The provider completed: the actual cost (at most the reservation) and usage replace the reservation. */
  | { kind: 'settle'; costMicrodollars: number | null; model: string; inputTokens: number | null; outputTokens: number | null; images: number | null }
  /** Rejected before the provider accepted it: the reservation is released. */
  | { kind: 'release'; code: string }
  /** Accepted but interrupted or ambiguous: charged (the actual cost when known, else the reserved bound; never above it), not released. */
  | { kind: 'billable_failure'; code: string; costMicrodollars: number | null; model: string | null; inputTokens: number | null; outputTokens: number | null }
  /** Reserved but never dispatched, and the workflow's timer fired: released. */
  | { kind: 'expire' };

/**
 * What a recorded end with an overrun logs (at warn): the provider reported more usage than the
 * reservation allows, charged at the reservation, the rest absorbed. Ids and amounts only; null
 * without an overrun. Whoever records the end logs it (the API's settlement, the workflow's step).
 */
export function overrunWarning(recorded: Reservation | null): { message: string; fields: Record<string, unknown> } | null {
  if (!recorded || recorded.overrunMicrodollars <= 0) return null;
  return {
    message: 'intelligence overrun: the provider reported more usage than the reservation allows; charged at the reservation',
    fields: {
      reservationId: recorded.id,
      organizationId: recorded.organizationId,
      operation: recorded.operation,
      reservedMicrodollars: recorded.reservedMicrodollars,
      reportedCostMicrodollars: recorded.reportedCostMicrodollars,
      overrunMicrodollars: recorded.overrunMicrodollars,
    },
  };
}

const transitions: Record<Completion['kind'], { from: ReservationState[]; to: ReservationState }> = {
  settle: { from: ['dispatched'], to: 'settled' },
  release: { from: ['reserved', 'dispatched'], to: 'released' },
  billable_failure: { from: ['dispatched'], to: 'billable_failure' },
  expire: { from: ['reserved'], to: 'expired' },
};

/**
 * Records how the request of this workflow attempt ended, moving its spend and its slot in the same
 * transaction. A compare-and-set: when the row is no longer in a state this completion may leave,
 * nothing changes and the row is answered as it is (so a retried activity is harmless). Null when
 * the attempt never reserved (its reservation was refused, or never made before the timer).
 */
export async function completeReservation(db: Db & { transaction: DatabaseTransactionConnection['transaction'] }, workflowId: string, completion: Completion): Promise<Reservation | null> {
  const { from, to } = transitions[completion.kind];
  return db.transaction(async (tx) => {
    // What the provider's report prices at; the charge is capped at the reservation, the rest is the overrun.
    const reported = completion.kind === 'settle' || completion.kind === 'billable_failure' ? completion.costMicrodollars : null;
    const charged = completion.kind === 'settle' || completion.kind === 'billable_failure';
    const charge = charged ? sql.fragment`least(coalesce(${reported}::bigint, r.reserved_microdollars), r.reserved_microdollars)` : sql.fragment`0::bigint`;
    const overrun = sql.fragment`greatest(0, coalesce(${reported}::bigint, 0) - r.reserved_microdollars)`;
    const detail =
      completion.kind === 'settle'
        ? { model: completion.model, input: completion.inputTokens, output: completion.outputTokens, images: completion.images, code: null }
        : completion.kind === 'billable_failure'
          ? { model: completion.model, input: completion.inputTokens, output: completion.outputTokens, images: null, code: completion.code }
          : { model: null, input: null, output: null, images: null, code: completion.kind === 'release' ? completion.code : 'reservation_expired' };
    const moved = await tx.maybeOne(sql.type(reservationRowSchema)`
      UPDATE intelligence_reservations r
         SET state = ${to}, charged_microdollars = ${charge}, reported_cost_microdollars = ${reported}::bigint, overrun_microdollars = ${overrun},
             model = ${detail.model}, input_tokens = ${detail.input},
             output_tokens = ${detail.output}, images = ${detail.images}, outcome_code = ${detail.code}, finished_at = now()
       WHERE r.workflow_id = ${workflowId} AND r.state = ANY(${sql.array(from, 'text')})
      RETURNING ${columns}`);
    if (!moved) {
      return tx.maybeOne(sql.type(reservationRowSchema)`SELECT ${columns} FROM intelligence_reservations r WHERE r.workflow_id = ${workflowId}`);
    }
    const delta = (moved.chargedMicrodollars ?? 0) - moved.reservedMicrodollars;
    await tx.query(sql.type(z.object({}))`
      UPDATE organization_intelligence_spend SET committed_microdollars = committed_microdollars + ${delta}::bigint
       WHERE organization_id = ${moved.organizationId} AND month_start = ${moved.monthStart}`);
    await tx.query(sql.type(z.object({}))`
      UPDATE organization_intelligence_slots SET in_flight = in_flight - 1 WHERE organization_id = ${moved.organizationId}`);
    await tx.query(sql.type(z.object({}))`
      UPDATE installation_intelligence_spend SET committed_microdollars = committed_microdollars + ${delta}::bigint
       WHERE installation_id = ${moved.installationId} AND month_start = ${moved.monthStart}`);
    return moved;
  });
}

/** The state of this workflow attempt's reservation (null: it never reserved). */
export async function reservationOfWorkflow(db: Db, workflowId: string): Promise<Reservation | null> {
  return db.maybeOne(sql.type(reservationRowSchema)`SELECT ${columns} FROM intelligence_reservations r WHERE r.workflow_id = ${workflowId}`);
}

// ---- results (replayed for a retried key) ----------------------------------------------------

const storedResultSchema = z.object({ result: z.unknown(), bytes: z.instanceof(Buffer).nullable() });

/** Stores the answer of a dispatched request before it settles, so a settled request always has one to replay. */
export async function storeResult(db: Db, workflowId: string, result: unknown, bytes: Buffer | null = null): Promise<void> {
  const row = await db.maybeOne(sql.type(z.object({ id: z.uuid() }))`
    INSERT INTO intelligence_results (reservation_id, result, bytes)
    SELECT r.id, ${sql.jsonb(result as never)}, ${bytes === null ? null : sql.binary(bytes)} FROM intelligence_reservations r
     WHERE r.workflow_id = ${workflowId} AND r.state = 'dispatched'
    ON CONFLICT (reservation_id) DO UPDATE SET result = EXCLUDED.result, bytes = EXCLUDED.bytes
    RETURNING reservation_id AS id`);
  if (!row) throw new AppError('intelligence_reservation_expired', 'The reservation is no longer dispatched.');
}

export async function storedResult(db: Db, reservationId: string): Promise<{ result: unknown; bytes: Buffer | null } | null> {
  return db.maybeOne(sql.type(storedResultSchema)`SELECT result, bytes FROM intelligence_results WHERE reservation_id = ${reservationId}`);
}

// ---- receipts --------------------------------------------------------------------------------

/** The usage receipt of a finished, charged request (settled or billable failure). */
export function receiptOf(r: Reservation, provider: 'openai-compatible' = 'openai-compatible'): UsageReceipt {
  if (r.state !== 'settled' && r.state !== 'billable_failure') throw new Error(`reservation ${r.id} is ${r.state}: no receipt`);
  return {
    id: r.id,
    kind: 'service.product-intelligence-usage',
    organizationId: r.organizationId,
    installationId: r.installationId,
    operation: r.operation,
    outcome: r.state,
    outcomeCode: r.outcomeCode,
    model: r.model === null ? null : { id: r.model, provider },
    costMicrodollars: r.chargedMicrodollars ?? 0,
    reservedMicrodollars: r.reservedMicrodollars,
    reportedCostMicrodollars: r.reportedCostMicrodollars,
    overrunMicrodollars: r.overrunMicrodollars,
    usage: { inputTokens: r.inputTokens, outputTokens: r.outputTokens, images: r.images },
    requestedAt: r.createdAt,
    dispatchedAt: r.dispatchedAt,
    settledAt: r.finishedAt ?? r.createdAt,
  };
}

const receiptCursorSchema = z.object({ createdAt: z.string(), id: z.uuid() });

/**
 * The organization's usage receipts, newest first, optionally of one installation. Receipts belong
 * to the organization, so every installation of it reads them (the budget is shared); another
 * organization's receipts are never listed.
 */
export async function listReceipts(
  db: Db,
  organizationId: string,
  page: { limit: number; cursor?: string | undefined; installationId?: string | undefined; overrunsOnly?: boolean },
): Promise<{ receipts: UsageReceipt[]; nextCursor: string | null }> {
  const after = page.cursor ? decodeCursor(page.cursor, receiptCursorSchema) : null;
  const rows = await db.any(sql.type(reservationRowSchema)`
    SELECT ${columns} FROM intelligence_reservations r
     WHERE r.organization_id = ${organizationId} AND r.state IN ('settled', 'billable_failure')
       AND (${page.installationId ?? null}::uuid IS NULL OR r.installation_id = ${page.installationId ?? null}::uuid)
       ${page.overrunsOnly ? sql.fragment`AND r.overrun_microdollars > 0` : sql.fragment``}
       AND (${after?.createdAt ?? null}::timestamptz IS NULL OR (r.created_at, r.id) < (${after?.createdAt ?? null}::timestamptz, ${after?.id ?? null}::uuid))
     ORDER BY r.created_at DESC, r.id DESC
     LIMIT ${page.limit + 1}`);
  const receipts = rows.slice(0, page.limit).map((r) => receiptOf(r));
  const last = rows.length > page.limit ? rows[page.limit - 1] : undefined;
  return { receipts, nextCursor: last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null };
}

const overrunSummarySchema = z.object({ requests: z.coerce.number(), overrunMicrodollars: z.coerce.number(), chargedMicrodollars: z.coerce.number() });

/**
 * The receipts of an organization whose provider reported more than they reserved (the overrun the
 * service absorbed rather than pass the budget), paged as listReceipts, with this month's totals.
 */
export async function listOverruns(
  db: Db,
  organizationId: string,
  page: { limit: number; cursor?: string | undefined },
): Promise<{ month: z.infer<typeof overrunSummarySchema>; receipts: UsageReceipt[]; nextCursor: string | null }> {
  const month = await db.one(sql.type(overrunSummarySchema)`
    SELECT count(*) AS requests, coalesce(sum(overrun_microdollars), 0) AS "overrunMicrodollars", coalesce(sum(charged_microdollars), 0) AS "chargedMicrodollars"
      FROM intelligence_reservations
     WHERE organization_id = ${organizationId} AND overrun_microdollars > 0 AND month_start = ${currentMonth}`);
  return { month, ...(await listReceipts(db, organizationId, { ...page, overrunsOnly: true })) };
}

const overrunByOrganizationSchema = z.object({ organizationId: z.uuid(), requests: z.coerce.number(), overrunMicrodollars: z.coerce.number() });

/** This month's overruns per organization (only organizations that had one): for the metrics. */
export async function overrunsThisMonth(db: Db): Promise<readonly z.infer<typeof overrunByOrganizationSchema>[]> {
  return db.any(sql.type(overrunByOrganizationSchema)`
    SELECT organization_id AS "organizationId", count(*) AS requests, sum(overrun_microdollars) AS "overrunMicrodollars"
      FROM intelligence_reservations
     WHERE overrun_microdollars > 0 AND month_start = ${currentMonth}
     GROUP BY organization_id`);
}

export async function getReceipt(db: Db, organizationId: string, receiptId: string): Promise<UsageReceipt> {
  const row = /^[0-9a-f-]{36}$/i.test(receiptId)
    ? await db.maybeOne(sql.type(reservationRowSchema)`
        SELECT ${columns} FROM intelligence_reservations r
         WHERE r.id = ${receiptId} AND r.organization_id = ${organizationId} AND r.state IN ('settled', 'billable_failure')`)
    : null;
  if (!row) throw new AppError('usage_receipt_not_found');
  return receiptOf(row);
}

// ---- budget ----------------------------------------------------------------------------------

const budgetSummarySchema = z.object({
  monthStart: isoTimestamp,
  resetsAt: isoTimestamp,
  budget: z.coerce.number().nullable(),
  maxConcurrent: z.coerce.number().nullable(),
  sublimit: z.coerce.number().nullable(),
  orgCommitted: z.coerce.number(),
  inFlight: z.coerce.number(),
  installationCommitted: z.coerce.number(),
});

/** This month's budget, commitments and slots of the caller's organization and installation. */
export async function getBudget(db: Db, organizationId: string, installationId: string): Promise<IntelligenceBudget> {
  const row = await db.one(sql.type(budgetSummarySchema)`
    WITH m AS (SELECT ${currentMonth} AS month_start)
    SELECT m.month_start AS "monthStart", m.month_start + interval '1 month' AS "resetsAt",
           (o.settings #>> '{productRuntime,intelligenceBudgetMicrodollarsMonthly}')::bigint AS budget,
           (o.settings #>> '{productRuntime,maxConcurrentIntelligence}')::bigint AS "maxConcurrent",
           (i.configuration #>> '{productRuntime,intelligenceBudgetMicrodollarsMonthly}')::bigint AS sublimit,
           coalesce((SELECT committed_microdollars FROM organization_intelligence_spend s WHERE s.organization_id = o.id AND s.month_start = m.month_start), 0) AS "orgCommitted",
           coalesce((SELECT in_flight FROM organization_intelligence_slots s WHERE s.organization_id = o.id), 0) AS "inFlight",
           coalesce((SELECT committed_microdollars FROM installation_intelligence_spend s WHERE s.installation_id = i.id AND s.month_start = m.month_start), 0) AS "installationCommitted"
      FROM m, product_installations i JOIN organizations o ON o.id = i.organization_id
     WHERE i.id = ${installationId} AND o.id = ${organizationId}`);
  const orgLeft = Math.max(0, (row.budget ?? 0) - row.orgCommitted);
  const installationLeft = row.sublimit === null ? orgLeft : Math.max(0, row.sublimit - row.installationCommitted);
  return {
    monthStart: row.monthStart,
    resetsAt: row.resetsAt,
    organization: {
      budgetMicrodollars: row.budget,
      committedMicrodollars: row.orgCommitted,
      maxConcurrent: row.maxConcurrent ?? DEFAULT_MAX_CONCURRENT_INTELLIGENCE,
      inFlight: row.inFlight,
    },
    installation: { sublimitMicrodollars: row.sublimit, committedMicrodollars: row.installationCommitted },
    availableMicrodollars: Math.min(orgLeft, installationLeft),
  };
}
