// What an operator alerts on, read from Postgres for the Prometheus scrape (api/metrics/domain.ts,
// issue 26). Each function is one aggregate statement over one domain's table; together they are a
// read model across domains, so they live here rather than in the modules that write those rows.
// Per-organization figures carry the organization's id only (never a name) and cover only
// organizations with something to report this month (a spend row, a usage row, stored media).
//
// Cost: every statement is an aggregate whose result is bounded by the number of states (or of
// organizations with activity). The small tables (pending starts, live sessions, per-organization
// counters) are read through their primary or partial indexes; the counts by state of proposals,
// Forge executions, webhook requests, reservations and OAuth attempts scan their table (no index
// leads with the state), so their cost grows with the table: test/metrics-domain.test.ts times a scrape.
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { MAX_DELIVERY_ATTEMPTS, SENDING_UNKNOWN_AFTER_SECONDS } from './automation/webhooks.ts';
import { DEFAULT_API_OPERATIONS_PER_MONTH } from './product-runtime/chain.ts';
import { DEFAULT_MEDIA_STORAGE_BYTES } from './product-runtime/entities.ts';
import { overrunsThisMonth } from './intelligence/ledger.ts';

type Db = CommonQueryMethods;

/** The calendar month (UTC) every monthly limit counts in: the ledger's and the operation leases' own. */
const currentMonth = sql.fragment`date_trunc('month', now(), 'UTC')`;

const count = z.coerce.number();
const byState = z.object({ state: z.string(), n: count });
const byOutcome = z.object({ outcome: z.string(), n: count });

const startsSchema = z.object({ pending: count, oldestAgeSeconds: count });

/** Workflow starts recorded but not yet made (the outbox, domain/workflow-intents.ts), and how long the oldest has waited (0: none). */
export async function pendingWorkflowStarts(db: Db): Promise<z.infer<typeof startsSchema>> {
  return db.one(sql.type(startsSchema)`
    SELECT count(*) AS pending, coalesce(extract(epoch FROM now() - min(created_at)), 0) AS "oldestAgeSeconds"
      FROM workflow_start_intents WHERE started_at IS NULL`);
}

const substringQueueSchema = z.object({ queued: count, oldestAgeSeconds: count });

/** Notes waiting for search's indexes (decisions 106, 114), and how long the oldest has waited (0: none). */
export async function substringIndexQueue(db: Db): Promise<z.infer<typeof substringQueueSchema>> {
  return db.one(sql.type(substringQueueSchema)`
    SELECT count(*) AS queued, coalesce(extract(epoch FROM now() - min(queued_at)), 0) AS "oldestAgeSeconds" FROM note_substring_pending`);
}

/** Action proposals by state (every state they are in; the caller fills in the zeros). */
export async function proposalsByState(db: Db): Promise<readonly { state: string; n: number }[]> {
  return db.any(sql.type(byState)`SELECT state, count(*) AS n FROM action_proposals GROUP BY state`);
}

/** Forge executions (apply and undo, one row each per proposal) that ended, by how. */
export async function forgeExecutionsByOutcome(db: Db): Promise<readonly { outcome: string; n: number }[]> {
  return db.any(sql.type(byOutcome)`
    SELECT state AS outcome, count(*) AS n FROM forge_executions WHERE state IN ('succeeded', 'failed') GROUP BY state`);
}

const deliverySchema = z.object({ outcome: z.string(), attempt: count, n: count });

/**
 * Webhook requests (one row per request; an attempt that sent nothing, once) by outcome and delivery
 * attempt. A request still `sending` is in flight and not counted until it ends; one still `sending`
 * after SENDING_UNKNOWN_AFTER_SECONDS will never end (its worker stopped) and counts as `unknown`,
 * as the executions API shows it. Attempts above MAX_DELIVERY_ATTEMPTS (none are made) count as the last.
 */
export async function webhookDeliveriesByOutcome(db: Db): Promise<readonly z.infer<typeof deliverySchema>[]> {
  const stale = sql.fragment`created_at < now() - make_interval(secs => ${SENDING_UNKNOWN_AFTER_SECONDS})`;
  return db.any(sql.type(deliverySchema)`
    SELECT CASE WHEN outcome = 'sending' THEN 'unknown' ELSE outcome END AS outcome, least(attempt, ${MAX_DELIVERY_ATTEMPTS}) AS attempt, count(*) AS n
      FROM webhook_executions
     WHERE outcome <> 'sending' OR ${stale}
     GROUP BY 1, 2`);
}

/** Intelligence reservations by state (domain/intelligence/ledger.ts). */
export async function reservationsByState(db: Db): Promise<readonly { state: string; n: number }[]> {
  return db.any(sql.type(byState)`SELECT state, count(*) AS n FROM intelligence_reservations GROUP BY state`);
}

const ratioSchema = z.object({ organizationId: z.uuid(), used: count, limit: count, ratio: count });

/**
 * This month's committed intelligence spend over the organization's monthly budget, for the
 * organizations with a budget and a spend row this month. Committed is what the budget check
 * compares (domain/intelligence/ledger.ts `reserve`): a reservation adds its whole bounded cost when
 * made and gives back the unused part when it ends, so it already holds the requests in flight.
 */
export async function intelligenceBudgetUse(db: Db): Promise<readonly z.infer<typeof ratioSchema>[]> {
  return db.any(sql.type(ratioSchema)`
    SELECT s.organization_id AS "organizationId", s.committed_microdollars AS used, b.budget AS limit,
           s.committed_microdollars::float8 / b.budget AS ratio
      FROM organization_intelligence_spend s
      JOIN organizations o ON o.id = s.organization_id
     CROSS JOIN LATERAL (SELECT (o.settings #>> '{productRuntime,intelligenceBudgetMicrodollarsMonthly}')::bigint AS budget) b
     WHERE s.month_start = ${currentMonth} AND b.budget > 0`);
}

/**
 * This month's Product Runtime operations over the organization's `apiOperationsPerMonth` (the
 * default when unset), for the organizations that made one this month (domain/product-runtime/
 * operation-leases.ts). A limit of 0 reads as used up (1).
 */
export async function operationQuotaUse(db: Db): Promise<readonly z.infer<typeof ratioSchema>[]> {
  return db.any(sql.type(ratioSchema)`
    SELECT u.organization_id AS "organizationId", u.used, l.quota AS limit,
           CASE WHEN l.quota > 0 THEN u.used::float8 / l.quota ELSE 1 END AS ratio
      FROM organization_api_usage u
      JOIN organizations o ON o.id = u.organization_id
     CROSS JOIN LATERAL (SELECT coalesce((o.settings #>> '{productRuntime,apiOperationsPerMonth}')::bigint, ${DEFAULT_API_OPERATIONS_PER_MONTH}) AS quota) l
     WHERE u.month_start = ${currentMonth} AND u.used > 0`);
}

/**
 * Media bytes held against the organization's `mediaStorageBytes` (the default when unset), for the
 * organizations holding any: what the upload check compares (domain/media/library.ts), so an
 * upload in progress counts from the moment its bytes are claimed. A cap of 0 reads as used up (1).
 */
export async function mediaStorageUse(db: Db): Promise<readonly z.infer<typeof ratioSchema>[]> {
  return db.any(sql.type(ratioSchema)`
    SELECT s.organization_id AS "organizationId", s.used_bytes AS used, l.cap AS limit,
           CASE WHEN l.cap > 0 THEN s.used_bytes::float8 / l.cap ELSE 1 END AS ratio
      FROM organization_media_storage s
      JOIN organizations o ON o.id = s.organization_id
     CROSS JOIN LATERAL (SELECT coalesce((o.settings #>> '{productRuntime,mediaStorageBytes}')::bigint, ${DEFAULT_MEDIA_STORAGE_BYTES}) AS cap) l
     WHERE s.used_bytes > 0`);
}

/** OAuth connection attempts that ended, by how (completed, failed, expired); pending ones are not counted. */
export async function oauthAttemptsByOutcome(db: Db): Promise<readonly { outcome: string; n: number }[]> {
  return db.any(sql.type(byOutcome)`
    SELECT status AS outcome, count(*) AS n FROM oauth_attempts WHERE status <> 'pending' GROUP BY status`);
}

/** Live reviewer console sessions: not ended or expired, and their token neither revoked nor expired (as admission reads them). */
export async function liveConsoleSessions(db: Db): Promise<number> {
  return db.oneFirst(sql.type(z.object({ n: count }))`
    SELECT count(*) AS n
      FROM console_sessions s JOIN access_tokens t ON t.id = s.token_id
     WHERE s.ended_at IS NULL AND s.expires_at > now()
       AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now())`);
}

export type OperationsSnapshot = {
  starts: z.infer<typeof startsSchema>;
  substringQueue: z.infer<typeof substringQueueSchema>;
  proposals: readonly { state: string; n: number }[];
  forgeExecutions: readonly { outcome: string; n: number }[];
  webhookDeliveries: readonly z.infer<typeof deliverySchema>[];
  reservations: readonly { state: string; n: number }[];
  intelligenceBudget: readonly z.infer<typeof ratioSchema>[];
  operationQuota: readonly z.infer<typeof ratioSchema>[];
  mediaStorage: readonly z.infer<typeof ratioSchema>[];
  oauthAttempts: readonly { outcome: string; n: number }[];
  consoleSessions: number;
  /** What providers reported beyond the reservations this month (docs/intelligence.md, "The bounded cost"). */
  intelligenceOverruns: Awaited<ReturnType<typeof overrunsThisMonth>>;
};

/** Every figure above, one statement after another (the caller passes one connection: a scrape holds one, briefly). */
export async function readOperationsSnapshot(db: Db): Promise<OperationsSnapshot> {
  return {
    starts: await pendingWorkflowStarts(db),
    substringQueue: await substringIndexQueue(db),
    proposals: await proposalsByState(db),
    forgeExecutions: await forgeExecutionsByOutcome(db),
    webhookDeliveries: await webhookDeliveriesByOutcome(db),
    reservations: await reservationsByState(db),
    intelligenceBudget: await intelligenceBudgetUse(db),
    operationQuota: await operationQuotaUse(db),
    mediaStorage: await mediaStorageUse(db),
    oauthAttempts: await oauthAttemptsByOutcome(db),
    consoleSessions: await liveConsoleSessions(db),
    intelligenceOverruns: await overrunsThisMonth(db),
  };
}
