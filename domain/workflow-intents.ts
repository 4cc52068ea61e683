// The transactional outbox of workflow starts (docs/decisions.md, "durable starts"). A write that a
// workflow must act on records the start it needs in the same transaction (`recordStartIntent`),
// keyed by the workflow's deterministic id; after the commit the request tries the start at once,
// and the relay (api/workflow-relay.ts) claims whatever is still pending and starts it. Nothing here
// knows Temporal: an intent is a kind and its arguments, and the adapter that maps kinds to starts
// lives beside the routes (api/routes/shared/workflow-starts.ts).
//
// Claims use FOR UPDATE SKIP LOCKED and move `next_attempt_at` forward by a lease in the same
// statement, so any number of relays (one per API process) share the queue without taking the same
// intent twice at once; a relay that dies mid-start leaves its claims to be retaken when the lease
// ends. A start made twice (the request and a relay, or a lease that ran out) is harmless: every
// kind starts under a conflict policy that treats "already started" as done.
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { isoTimestamp } from '../db/row-schemas.ts';

type Db = CommonQueryMethods;

export type StartIntent = { workflowId: string; kind: string; input: Record<string, unknown> };

const intentRow = z.object({
  workflowId: z.string(),
  kind: z.string(),
  input: z.record(z.string(), z.unknown()),
  attempts: z.number(),
  createdAt: isoTimestamp,
});
export type ClaimedIntent = z.infer<typeof intentRow>;

/** Records the starts a write needs, in the caller's transaction. A second record of one workflow id is a no-op. */
export async function recordStartIntents(tx: Db, intents: readonly StartIntent[]): Promise<void> {
  if (intents.length === 0) return;
  await tx.query(sql.type(z.object({}))`
    INSERT INTO workflow_start_intents (workflow_id, kind, input)
    SELECT * FROM ${sql.unnest(
      intents.map((i) => [i.workflowId, i.kind, JSON.stringify(i.input)]),
      ['text', 'text', 'jsonb'],
    )}
    ON CONFLICT (workflow_id) DO NOTHING`);
}

/** The start was made (or found already made): the intent is done. */
export async function markStarted(db: Db, workflowIds: readonly string[]): Promise<void> {
  if (workflowIds.length === 0) return;
  await db.query(sql.type(z.object({}))`${markStartedStatement(workflowIds)}`);
}

/** markStarted as a statement, for a writer that marks a start with its own write (a step of its WITH). */
export function markStartedStatement(workflowIds: readonly string[]) {
  return sql.fragment`UPDATE workflow_start_intents SET started_at = now(), last_error = NULL
     WHERE workflow_id = ANY(${sql.array(workflowIds, 'text')}) AND started_at IS NULL`;
}

/**
 * Claims up to `limit` due intents for `leaseMs`: no other relay takes them until the lease ends
 * (then they are due again, should this relay have died). Oldest first.
 */
export async function claimDueIntents(db: Db, limit: number, leaseMs: number): Promise<ClaimedIntent[]> {
  const rows = await db.any(sql.type(intentRow)`
    UPDATE workflow_start_intents w
       SET next_attempt_at = now() + ${leaseMs} * interval '1 millisecond', attempts = w.attempts + 1
      FROM (SELECT workflow_id FROM workflow_start_intents
             WHERE started_at IS NULL AND next_attempt_at <= now()
             ORDER BY next_attempt_at, created_at
             LIMIT ${limit}
             FOR UPDATE SKIP LOCKED) due
     WHERE w.workflow_id = due.workflow_id
    RETURNING w.workflow_id AS "workflowId", w.kind, w.input, w.attempts, w.created_at AS "createdAt"`);
  return [...rows].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

/** Exponential backoff with full jitter from 1 s to 60 s: Temporal back from an outage is not stampeded. */
export function backoffMs(attempts: number, random: () => number = Math.random): number {
  const ceiling = Math.min(60_000, 1_000 * 2 ** Math.max(0, attempts - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** A failed attempt: due again after the backoff, with the stable reason kept for operators. */
export async function markAttemptFailed(db: Db, workflowId: string, reason: string, retryInMs: number): Promise<void> {
  await db.query(sql.type(z.object({}))`
    UPDATE workflow_start_intents
       SET next_attempt_at = now() + ${retryInMs} * interval '1 millisecond', last_error = ${reason.slice(0, 500)}
     WHERE workflow_id = ${workflowId} AND started_at IS NULL`);
}

/**
 * Temporal took a start again after refusing: every intent waiting out a backoff is due now, so the
 * backlog of an outage drains within a round or two instead of at each intent's next backoff.
 */
export async function reviveBackedOffIntents(db: Db): Promise<number> {
  const rows = await db.any(sql.type(z.object({ workflowId: z.string() }))`
    UPDATE workflow_start_intents SET next_attempt_at = now()
     WHERE started_at IS NULL AND last_error IS NOT NULL AND next_attempt_at > now()
    RETURNING workflow_id AS "workflowId"`);
  return rows.length;
}

/** Started intents are kept a day for operators, then removed (a bounded batch per call). */
export async function pruneStartedIntents(db: Db, olderThanMs = 86_400_000, batch = 1_000): Promise<number> {
  const rows = await db.any(sql.type(z.object({ workflowId: z.string() }))`
    DELETE FROM workflow_start_intents
     WHERE workflow_id IN (SELECT workflow_id FROM workflow_start_intents
                            WHERE started_at < now() - ${olderThanMs} * interval '1 millisecond' LIMIT ${batch})
    RETURNING workflow_id AS "workflowId"`);
  return rows.length;
}

const pendingSummarySchema = z.object({
  pending: z.coerce.number(),
  oldestCreatedAt: isoTimestamp.nullable(),
  oldestAgeSeconds: z.coerce.number().nullable(),
  maxAttempts: z.coerce.number().nullable(),
});
const pendingRow = z.object({
  workflowId: z.string(),
  kind: z.string(),
  attempts: z.number(),
  createdAt: isoTimestamp,
  nextAttemptAt: isoTimestamp,
  lastError: z.string().nullable(),
});

/** What is pending and how old, for operators (`npm run ops -- starts pending`). */
export async function pendingIntents(db: Db, limit = 50): Promise<{ summary: z.infer<typeof pendingSummarySchema>; byKind: Record<string, number>; oldest: z.infer<typeof pendingRow>[] }> {
  const summary = await db.one(sql.type(pendingSummarySchema)`
    SELECT count(*) AS pending, min(created_at) AS "oldestCreatedAt",
           extract(epoch FROM now() - min(created_at)) AS "oldestAgeSeconds", max(attempts) AS "maxAttempts"
      FROM workflow_start_intents WHERE started_at IS NULL`);
  const kinds = await db.any(sql.type(z.object({ kind: z.string(), n: z.coerce.number() }))`
    SELECT kind, count(*) AS n FROM workflow_start_intents WHERE started_at IS NULL GROUP BY kind ORDER BY kind`);
  const oldest = await db.any(sql.type(pendingRow)`
    SELECT workflow_id AS "workflowId", kind, attempts, created_at AS "createdAt", next_attempt_at AS "nextAttemptAt", last_error AS "lastError"
      FROM workflow_start_intents WHERE started_at IS NULL ORDER BY created_at LIMIT ${limit}`);
  return { summary, byKind: Object.fromEntries(kinds.map((k) => [k.kind, k.n])), oldest: [...oldest] };
}
