// Events, triggers and runs. An ingested event is normalised into the versioned automation
// contract and, in the same transaction, creates one run per matching active event trigger. A
// schedule trigger fires through a Temporal Schedule. Processing a run turns it into an action
// proposal for review: nothing a trigger does bypasses review.
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { z } from 'zod';
import { AppError } from '../errors.ts';
import { fingerprintOf } from '../idempotency.ts';
import { noteActionSchema } from './catalog.ts';
import { getProposal } from './proposals.ts';
import { submitProposal } from './policy.ts';
import { deliveryMessageId, subscribedEndpoints } from './webhooks.ts';
import { deliveryStart } from './workflow-ids.ts';
import { recordStartIntents } from '../workflow-intents.ts';
import type { StartIntent } from '../workflow-intents.ts';
import type { Proposal } from './proposals.ts';
import { emptyRow, idRow, isoTimestamp } from '../../db/row-schemas.ts';
import { EVENT_CONTRACT, eventSchema } from './event-contract.ts';
import type { AutomationEvent } from './event-contract.ts';

type Db = CommonQueryMethods;

// The contract's shape lives in event-contract.ts, which webhooks.ts (the deliveries this module
// starts) reads too; re-exported here, where the routes read the rest of the events' rules.
export { EVENT_CONTRACT, EVENT_CONTRACT_VERSION, eventSchema } from './event-contract.ts';
export type { AutomationEvent } from './event-contract.ts';
/** Bytes of an event's data (as JSON). */
export const MAX_EVENT_DATA_BYTES = 256 * 1024;

/**
 * The window an event's occurredAt may fall in: from the Unix epoch to a day after it is received
 * (clock skew between the bridge and us). Anything else is a bridge bug; Postgres could not even
 * store a year 0.
 */
export const OCCURRED_AT_EARLIEST = '1970-01-01T00:00:00Z';
export const OCCURRED_AT_MAX_AHEAD_MS = 24 * 3600 * 1000;

/** The automation contract's occurredAt, validated where the contract lives. */
export const occurredAtSchema = z.iso
  .datetime({ offset: true })
  .refine((value) => Date.parse(value) >= Date.parse(OCCURRED_AT_EARLIEST), { message: `must not be before ${OCCURRED_AT_EARLIEST}` })
  .refine((value) => Date.parse(value) <= Date.now() + OCCURRED_AT_MAX_AHEAD_MS, { message: 'must not be more than 24 hours after the event is received' })
  .describe(`When the event happened (RFC 3339 with an offset), from ${OCCURRED_AT_EARLIEST} to 24 hours after receipt; default: when it is received.`);


const eventColumns = sql.fragment`${EVENT_CONTRACT}::text AS contract, e.contract_version AS version, e.id, e.workspace_id AS "workspaceId", e.type, e.source,
  e.occurred_at AS "occurredAt", e.received_at AS "receivedAt", e.data`;

/** `starts`: the workflow starts recorded with the event (none on a replay), for the request to try at once. */
export type IngestResult = { event: AutomationEvent; runIds: string[]; replayed: boolean; starts: StartIntent[] };

export async function ingestEvent(
  db: DatabasePool,
  input: { workspaceId: string; type: string; source: string; occurredAt: string | null; data: Record<string, unknown>; idempotencyKey: string | null; accountId: string },
): Promise<IngestResult> {
  if (Buffer.byteLength(JSON.stringify(input.data)) > MAX_EVENT_DATA_BYTES) {
    throw new AppError('payload_too_large', `Event data is limited to ${MAX_EVENT_DATA_BYTES} bytes.`);
  }
  return db.transaction(async (tx) => {
    // A concurrent insert with the same key waits on the unique index, then finds the first event.
    const inserted = await tx.maybeOne(sql.type(eventSchema)`
      INSERT INTO automation_events AS e (workspace_id, type, source, occurred_at, data, idempotency_key, received_by_account_id)
      VALUES (${input.workspaceId}, ${input.type}, ${input.source}, coalesce(${input.occurredAt}::timestamptz, now()), ${sql.jsonb(input.data as never)},
              ${input.idempotencyKey}, ${input.accountId})
      ON CONFLICT (workspace_id, received_by_account_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
      RETURNING ${eventColumns}`);
    if (!inserted) {
      const existing = await tx.one(sql.type(eventSchema)`
        SELECT ${eventColumns} FROM automation_events e
         WHERE e.workspace_id = ${input.workspaceId} AND e.received_by_account_id = ${input.accountId} AND e.idempotency_key = ${input.idempotencyKey}`);
      const sameEvent =
        fingerprintOf({ type: existing.type, source: existing.source, data: existing.data }) === fingerprintOf({ type: input.type, source: input.source, data: input.data }) &&
        (input.occurredAt === null || Date.parse(input.occurredAt) === Date.parse(existing.occurredAt));
      if (!sameEvent) {
        throw new AppError('idempotency_key_reused', 'This Idempotency-Key was used for another event.');
      }
      const runIds = await tx.anyFirst(sql.type(idRow)`SELECT id FROM automation_runs WHERE event_id = ${existing.id} ORDER BY created_at, id`);
      return { event: existing, runIds: [...runIds], replayed: true, starts: [] };
    }
    const runIds = await tx.anyFirst(sql.type(idRow)`
      INSERT INTO automation_runs (workspace_id, trigger_id, event_id, fire_key)
      SELECT t.workspace_id, t.id, ${inserted.id}, ${inserted.id}
        FROM automation_triggers t
       WHERE t.workspace_id = ${input.workspaceId} AND t.kind = 'event' AND t.status = 'active'
         AND (t.event_type = ${input.type} OR t.event_type = '*')
         AND ${sql.jsonb(input.data as never)} @> t.filter
      ON CONFLICT (trigger_id, fire_key) DO NOTHING
      RETURNING id`);
    // The deliveries to the endpoints subscribed now, recorded with the event (the outbox): an
    // acknowledged event is delivered even if Temporal is down when the request ends.
    const starts = (await subscribedEndpoints(tx, inserted)).map((endpointId) =>
      deliveryStart({ eventId: inserted.id, endpointId, messageId: deliveryMessageId(inserted.id, endpointId), workspaceId: inserted.workspaceId }),
    );
    await recordStartIntents(tx, starts);
    return { event: inserted, runIds: [...runIds], replayed: false, starts };
  });
}

/** Whether a mapping names a live vault owned by the workspace. */
export async function mappingInWorkspace(db: Db, mappingId: string, workspaceId: string): Promise<boolean> {
  return db.exists(sql.type(idRow)`
    SELECT mp.id FROM vault_mappings mp JOIN vaults v ON v.id = mp.vault_id
     WHERE mp.id = ${mappingId} AND mp.revoked_at IS NULL AND v.owner_workspace_id = ${workspaceId}`);
}

export async function getEvent(db: Db, id: string): Promise<AutomationEvent | null> {
  return db.maybeOne(sql.type(eventSchema)`SELECT ${eventColumns} FROM automation_events e WHERE e.id = ${id}`);
}

// ---- triggers --------------------------------------------------------------------------------

const timeZone = z.string().refine((tz) => {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}, 'not an IANA time zone');

export const scheduleSchema = z.union([
  z.strictObject({ cron: z.string().min(9).max(200).describe('Five-field cron, e.g. "0 8 * * 1".'), timeZone: timeZone.default('UTC') }),
  z.strictObject({ intervalSeconds: z.number().int().min(60).max(31 * 24 * 3600), timeZone: timeZone.default('UTC') }),
]);
export type TriggerSchedule = z.infer<typeof scheduleSchema>;

export const triggerProposalSchema = z.strictObject({ bridge: z.string().regex(/^[a-z][a-z0-9-]{1,62}$/), action: noteActionSchema, summary: z.string().max(2000).default('') });

export const triggerSchema = z.object({
  id: z.uuid(),
  workspaceId: z.uuid(),
  createdByAccountId: z.uuid(),
  name: z.string(),
  kind: z.enum(['event', 'schedule']),
  status: z.enum(['active', 'paused']),
  eventType: z.string().nullable(),
  filter: z.record(z.string(), z.unknown()),
  schedule: z.record(z.string(), z.unknown()).nullable(),
  proposal: z.record(z.string(), z.unknown()),
  createdAt: isoTimestamp,
  updatedAt: isoTimestamp,
});
export type Trigger = z.infer<typeof triggerSchema>;

const triggerColumns = sql.fragment`t.id, t.workspace_id AS "workspaceId", t.created_by_account_id AS "createdByAccountId", t.name, t.kind, t.status,
  t.event_type AS "eventType", t.filter, t.schedule, t.proposal, t.created_at AS "createdAt", t.updated_at AS "updatedAt"`;

export const scheduleIdOf = (triggerId: string) => `trigger-${triggerId}`;

export async function insertTrigger(
  db: Db,
  input: { workspaceId: string; accountId: string; name: string; kind: 'event' | 'schedule'; status: 'active' | 'paused'; eventType: string | null; filter: Record<string, unknown>; schedule: TriggerSchedule | null; proposal: unknown },
): Promise<Trigger> {
  return db.one(sql.type(triggerSchema)`
    INSERT INTO automation_triggers AS t (id, workspace_id, created_by_account_id, name, kind, status, event_type, filter, schedule, proposal)
    VALUES (${randomUUID()}, ${input.workspaceId}, ${input.accountId}, ${input.name}, ${input.kind}, ${input.status}, ${input.eventType},
            ${sql.jsonb(input.filter as never)}, ${input.schedule ? sql.jsonb(input.schedule as never) : null}, ${sql.jsonb(input.proposal as never)})
    RETURNING ${triggerColumns}`);
}

export async function getTrigger(db: Db, id: string): Promise<Trigger | null> {
  return db.maybeOne(sql.type(triggerSchema)`SELECT ${triggerColumns} FROM automation_triggers t WHERE t.id = ${id}`);
}

export async function listTriggers(db: Db, workspaceId: string) {
  return db.any(sql.type(triggerSchema)`SELECT ${triggerColumns} FROM automation_triggers t WHERE t.workspace_id = ${workspaceId} ORDER BY t.created_at, t.id`);
}

export async function updateTrigger(db: Db, id: string, change: { name?: string | undefined; status?: 'active' | 'paused' | undefined; filter?: Record<string, unknown> | undefined; proposal?: unknown }): Promise<Trigger> {
  return db.one(sql.type(triggerSchema)`
    UPDATE automation_triggers t SET
      name = coalesce(${change.name ?? null}, t.name),
      status = coalesce(${change.status ?? null}, t.status),
      filter = coalesce(${change.filter ? sql.jsonb(change.filter as never) : null}::jsonb, t.filter),
      proposal = coalesce(${change.proposal ? sql.jsonb(change.proposal as never) : null}::jsonb, t.proposal),
      updated_at = now()
     WHERE t.id = ${id}
    RETURNING ${triggerColumns}`);
}

export async function deleteTrigger(db: Db, id: string): Promise<void> {
  await db.query(sql.type(emptyRow)`DELETE FROM automation_triggers WHERE id = ${id}`);
}

/** A scheduled firing (from the Temporal Schedule); `fireKey` makes a retried firing a no-op. */
export async function recordScheduledRun(db: Db, triggerId: string, fireKey: string): Promise<string | null> {
  return db.maybeOneFirst(sql.type(idRow)`
    INSERT INTO automation_runs (workspace_id, trigger_id, fire_key)
    SELECT t.workspace_id, t.id, ${fireKey} FROM automation_triggers t WHERE t.id = ${triggerId} AND t.status = 'active'
    ON CONFLICT (trigger_id, fire_key) DO NOTHING
    RETURNING id`);
}

// ---- runs ------------------------------------------------------------------------------------

export const runSchema = z.object({
  id: z.uuid(),
  workspaceId: z.uuid(),
  triggerId: z.uuid(),
  eventId: z.uuid().nullable(),
  status: z.enum(['pending', 'succeeded', 'failed']),
  proposalId: z.uuid().nullable(),
  error: z.unknown(),
  createdAt: isoTimestamp,
  processedAt: isoTimestamp.nullable(),
});

const runColumns = sql.fragment`r.id, r.workspace_id AS "workspaceId", r.trigger_id AS "triggerId", r.event_id AS "eventId", r.status,
  r.proposal_id AS "proposalId", r.error, r.created_at AS "createdAt", r.processed_at AS "processedAt"`;

export async function listRuns(db: Db, workspaceId: string, limit: number) {
  return db.any(sql.type(runSchema)`SELECT ${runColumns} FROM automation_runs r WHERE r.workspace_id = ${workspaceId} ORDER BY r.created_at DESC, r.id DESC LIMIT ${limit}`);
}

export const PROCESS_BATCH = 50;

/**
 * Proposals whose review was never started (Temporal was down, or the process died, between
 * committing the proposal and starting its workflow, and the relay has not made it yet): the start
 * recorded with the proposal still pending a while after creation, in workspaces the account
 * manages. /process starts their reviews now; starting is idempotent.
 */
export async function strandedProposals(db: Db, accountId: string, workspaceId: string | null): Promise<readonly Proposal[]> {
  const ids = await db.anyFirst(sql.type(idRow)`
    SELECT p.id FROM action_proposals p
      JOIN workflow_start_intents i ON i.workflow_id = p.workflow_id AND i.started_at IS NULL
     WHERE p.created_at < now() - interval '30 seconds'
       AND (${workspaceId}::uuid IS NULL OR p.workspace_id = ${workspaceId}::uuid)
       AND EXISTS (SELECT 1 FROM workspace_members m JOIN workspace_roles ro ON ro.id = m.role_id
                    WHERE m.workspace_id = p.workspace_id AND m.account_id = ${accountId} AND 'automation.manage' = ANY (ro.permissions))
     ORDER BY p.created_at LIMIT ${PROCESS_BATCH}`);
  const proposals: Proposal[] = [];
  for (const id of ids) {
    const proposal = await getProposal(db, id);
    if (proposal) proposals.push(proposal);
  }
  return proposals;
}

/**
 * Account-scoped processing: claims pending runs of workspaces where the account may manage
 * automation (`FOR UPDATE SKIP LOCKED`, so concurrent calls never take the same run), turns each
 * into an action proposal, and marks it done — in one transaction. The caller starts the reviews.
 */
export async function processPendingRuns(db: DatabasePool, accountId: string, workspaceId: string | null, defaultExpirySeconds: number): Promise<{ processed: Array<{ runId: string; proposal: Proposal }> }> {
  return db.transaction(async (tx) => {
    const claimed = await tx.any(sql.type(z.object({ id: z.uuid(), name: z.string(), workspaceId: z.uuid(), createdBy: z.uuid(), proposal: z.unknown() }))`
      SELECT r.id, t.name, r.workspace_id AS "workspaceId", t.created_by_account_id AS "createdBy", t.proposal
        FROM automation_runs r JOIN automation_triggers t ON t.id = r.trigger_id
       WHERE r.status = 'pending'
         AND (${workspaceId}::uuid IS NULL OR r.workspace_id = ${workspaceId}::uuid)
         AND EXISTS (SELECT 1 FROM workspace_members m JOIN workspace_roles ro ON ro.id = m.role_id
                      WHERE m.workspace_id = r.workspace_id AND m.account_id = ${accountId} AND 'automation.manage' = ANY (ro.permissions))
       ORDER BY r.created_at, r.id
       LIMIT ${PROCESS_BATCH}
       FOR UPDATE OF r SKIP LOCKED`);
    const processed: Array<{ runId: string; proposal: Proposal }> = [];
    for (const run of claimed) {
      const template = triggerProposalSchema.safeParse(run.proposal);
      if (!template.success) {
        await tx.query(sql.type(emptyRow)`
          UPDATE automation_runs SET status = 'failed', error = ${sql.jsonb({ code: 'invalid_request', message: 'The trigger\'s proposal is not valid.' })}, processed_at = now(), processed_by_account_id = ${accountId}
           WHERE id = ${run.id}`);
        continue;
      }
      const proposal = await submitProposal(tx, {
        id: randomUUID(),
        workspaceId: run.workspaceId,
        proposer: { kind: 'account', id: run.createdBy },
        actingForAccountId: null,
        bridge: template.data.bridge,
        action: template.data.action,
        summary: template.data.summary || `Trigger "${run.name}", run ${run.id}`,
        expiresInSeconds: defaultExpirySeconds,
      });
      await tx.query(sql.type(emptyRow)`
        UPDATE automation_runs SET status = 'succeeded', proposal_id = ${proposal.id}, processed_at = now(), processed_by_account_id = ${accountId} WHERE id = ${run.id}`);
      processed.push({ runId: run.id, proposal });
    }
    return { processed };
  });
}
