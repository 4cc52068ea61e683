// Action proposals and the Forge executor's steps. A proposal names a bounded action from the
// catalog; policy decides whether it may be reviewed; a reviewer (never the proposer, nor the one
// it acts for) approves or rejects; Forge applies an approved action through the knowledge core,
// recording an undo plan first and a receipt after. Undo is a new compensating write, never a
// database rollback. States (docs/automation.md):
//   proposed → pending_review → approved → executing → executed → undoing → undone
//                             ↘ rejected | expired          ↘ failed
import { sql } from 'slonik';
import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { z } from 'zod';
import { AppError } from '../errors.ts';
import { applyTransaction } from '../notes/knowledge.ts';
import type { TransactionAction } from '../notes/knowledge.ts';
import { contentBytes, noteLimits, validateNotePath } from '../notes/paths.ts';
import { findNotes } from '../notes/store.ts';
import { emptyRow, idRow, isoTimestamp } from '../../db/row-schemas.ts';
import { forgeIdempotencyKey, reviewWorkflowId } from './workflow-ids.ts';

type Db = CommonQueryMethods;

export const proposalStates = ['proposed', 'pending_review', 'approved', 'rejected', 'expired', 'executing', 'executed', 'failed', 'undoing', 'undone'] as const;
export const proposalStateSchema = z.enum(proposalStates);
export type ProposalState = z.infer<typeof proposalStateSchema>;

const writeNote = z.strictObject({
  type: z.literal('write-note'),
  path: z.string().min(1).max(4096),
  content: z.string(),
  expectedHash: z.string().optional(),
});

/** The catalog of action kinds Forge can execute, version 1. */
export const actionSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('note.write'), mappingId: z.uuid(), path: z.string().min(1).max(4096), content: z.string(), expectedHash: z.string().optional() }),
  z.strictObject({ kind: z.literal('note.transaction'), mappingId: z.uuid(), actions: z.array(writeNote).min(1).max(noteLimits.maxTransactionActions) }),
]);
export type ProposedAction = z.infer<typeof actionSchema>;
export const actionKinds = ['note.write', 'note.transaction'] as const;

export const proposalSchema = z.object({
  id: z.uuid(),
  workspaceId: z.uuid(),
  proposerAccountId: z.uuid(),
  actingForAccountId: z.uuid().nullable(),
  bridge: z.string(),
  actionKind: z.string(),
  action: z.record(z.string(), z.unknown()),
  summary: z.string(),
  state: proposalStateSchema,
  reviewerAccountId: z.uuid().nullable(),
  decisionReason: z.string().nullable(),
  expiresAt: isoTimestamp,
  workflowId: z.string(),
  createdAt: isoTimestamp,
  updatedAt: isoTimestamp,
});
export type Proposal = z.infer<typeof proposalSchema>;

const proposalColumns = sql.fragment`p.id, p.workspace_id AS "workspaceId", p.proposer_account_id AS "proposerAccountId",
  p.acting_for_account_id AS "actingForAccountId", p.bridge, p.action_kind AS "actionKind", p.action, p.summary, p.state,
  p.reviewer_account_id AS "reviewerAccountId", p.decision_reason AS "decisionReason", p.expires_at AS "expiresAt",
  p.workflow_id AS "workflowId", p.created_at AS "createdAt", p.updated_at AS "updatedAt"`;

export async function insertProposal(
  tx: Db,
  input: { id: string; workspaceId: string; proposerAccountId: string; actingForAccountId: string | null; bridge: string; action: ProposedAction; summary: string; expiresInSeconds: number },
): Promise<Proposal> {
  return tx.one(sql.type(proposalSchema)`
    WITH inserted AS (
      INSERT INTO action_proposals AS p (id, workspace_id, proposer_account_id, acting_for_account_id, bridge, action_kind, action, summary, expires_at, workflow_id)
      VALUES (${input.id}, ${input.workspaceId}, ${input.proposerAccountId}, ${input.actingForAccountId}, ${input.bridge}, ${input.action.kind},
              ${sql.jsonb(input.action as never)}, ${input.summary}, now() + make_interval(secs => ${input.expiresInSeconds}), ${reviewWorkflowId(input.id)})
      RETURNING *
    ), history AS (
      INSERT INTO action_proposal_history (proposal_id, state, actor_account_id, detail)
      SELECT id, 'proposed', ${input.proposerAccountId}::uuid, jsonb_build_object('bridge', ${input.bridge}::text) FROM inserted
    )
    SELECT ${proposalColumns} FROM inserted p`);
}

export async function getProposal(db: Db, id: string): Promise<Proposal | null> {
  return db.maybeOne(sql.type(proposalSchema)`SELECT ${proposalColumns} FROM action_proposals p WHERE p.id = ${id}`);
}

export async function listProposals(db: Db, input: { workspaceId: string; state?: ProposalState | undefined; limit: number; before?: { createdAt: string; id: string } | undefined }) {
  return db.any(sql.type(proposalSchema)`
    SELECT ${proposalColumns} FROM action_proposals p
     WHERE p.workspace_id = ${input.workspaceId}
       ${input.state ? sql.fragment`AND p.state = ${input.state}` : sql.fragment``}
       ${input.before ? sql.fragment`AND (date_trunc('milliseconds', p.created_at), p.id) < (${input.before.createdAt}::timestamptz, ${input.before.id}::uuid)` : sql.fragment``}
     -- Cursors carry milliseconds (what the API returns), so order at that precision too.
     ORDER BY date_trunc('milliseconds', p.created_at) DESC, p.id DESC
     LIMIT ${input.limit}`);
}

export const historyEntrySchema = z.object({ state: z.string(), occurredAt: isoTimestamp, actorAccountId: z.uuid().nullable(), detail: z.record(z.string(), z.unknown()) });

export async function proposalHistory(db: Db, id: string) {
  return db.any(sql.type(historyEntrySchema)`
    SELECT h.state, h.occurred_at AS "occurredAt", h.actor_account_id AS "actorAccountId", h.detail
      FROM action_proposal_history h WHERE h.proposal_id = ${id} ORDER BY h.id`);
}

/** The states each state may be entered from: every move is a compare-and-set along these edges. */
export const allowedFrom: Record<ProposalState, readonly ProposalState[]> = {
  proposed: [],
  pending_review: ['proposed'],
  approved: ['pending_review'],
  rejected: ['proposed', 'pending_review'],
  expired: ['pending_review'],
  executing: ['approved'],
  executed: ['executing', 'undoing'], // a failed undo leaves the applied change, so back to executed
  failed: ['executing'],
  undoing: ['executed'],
  undone: ['undoing'],
};

/**
 * Moves a proposal to `state` along an allowed edge and appends the history entry. A repeat of the
 * same move, or a move from a state that does not lead there, changes nothing.
 */
export async function transitionProposal(db: Db, input: { proposalId: string; state: ProposalState; actorAccountId?: string | null; detail?: Record<string, unknown>; reason?: string | null }): Promise<void> {
  await db.query(sql.type(emptyRow)`
    WITH moved AS (
      UPDATE action_proposals SET state = ${input.state}, updated_at = now(),
             reviewer_account_id = CASE WHEN ${input.state} IN ('approved', 'rejected') THEN ${input.actorAccountId ?? null}::uuid ELSE reviewer_account_id END,
             decision_reason = coalesce(${input.reason ?? null}, decision_reason)
       WHERE id = ${input.proposalId} AND state = ANY (${sql.array([...allowedFrom[input.state]], 'text')})
      RETURNING id
    )
    INSERT INTO action_proposal_history (proposal_id, state, actor_account_id, detail)
    SELECT id, ${input.state}, ${input.actorAccountId ?? null}, ${sql.jsonb((input.detail ?? {}) as never)} FROM moved`);
}

/** Takes back a claimed undo whose workflow could not be started. */
export async function releaseUndo(db: Db, proposalId: string): Promise<void> {
  await transitionProposal(db, { proposalId, state: 'executed', detail: { reason: 'undo could not be started' } });
}

/** How many undos were claimed for a proposal: each attempt gets its own workflow id. */
export async function undoAttempts(db: Db, proposalId: string): Promise<number> {
  return db.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT count(*)::int AS n FROM action_proposal_history WHERE proposal_id = ${proposalId} AND state = 'undoing'`);
}

/** Moves an executed proposal to undoing, once: false when it is not (or no longer) executed. */
export async function claimUndo(db: Db, proposalId: string, actorAccountId: string): Promise<boolean> {
  const row = await db.maybeOne(sql.type(idRow)`
    WITH moved AS (
      UPDATE action_proposals SET state = 'undoing', updated_at = now() WHERE id = ${proposalId} AND state = 'executed' RETURNING id
    ), history AS (
      INSERT INTO action_proposal_history (proposal_id, state, actor_account_id) SELECT id, 'undoing', ${actorAccountId}::uuid FROM moved
    )
    SELECT id FROM moved`);
  return row !== null;
}

/**
 * Opens the review of a proposal: policy first, so a refused proposal is rejected before anyone
 * reviews it; otherwise it is pending review. One short step (the review runs it as a local activity).
 */
export async function openReview(db: DatabasePool, proposalId: string): Promise<{ state: 'pending_review' } | { state: 'rejected'; reason: string }> {
  const proposal = await getProposal(db, proposalId);
  const verdict: PolicyVerdict = proposal ? await checkPolicy(db, proposal) : { ok: false, reason: 'The proposal no longer exists.' };
  if (!verdict.ok) {
    await transitionProposal(db, { proposalId, state: 'rejected', detail: { by: 'policy', reason: verdict.reason }, reason: verdict.reason });
    return { state: 'rejected', reason: verdict.reason };
  }
  await transitionProposal(db, { proposalId, state: 'pending_review' });
  return { state: 'pending_review' };
}

export type PolicyVerdict = { ok: true } | { ok: false; reason: string };

/** Policy before review: the kind is in the catalog, the targets lie in the workspace's vaults, sizes are bounded. */
export async function checkPolicy(db: Db, proposal: Proposal): Promise<PolicyVerdict> {
  const parsed = actionSchema.safeParse(proposal.action);
  if (!parsed.success || !(actionKinds as readonly string[]).includes(proposal.actionKind)) return { ok: false, reason: `Action kind ${proposal.actionKind} is not in the catalog.` };
  const action = parsed.data;
  const inWorkspace = await db.exists(sql.type(idRow)`
    SELECT mp.id FROM vault_mappings mp JOIN vaults v ON v.id = mp.vault_id
     WHERE mp.id = ${action.mappingId} AND mp.revoked_at IS NULL AND v.owner_workspace_id = ${proposal.workspaceId}`);
  if (!inWorkspace) return { ok: false, reason: 'The target mapping is not a vault of this workspace.' };
  try {
    const writes = toTransaction(action);
    let total = 0;
    for (const w of writes) {
      validateNotePath(w.path);
      total += contentBytes(w.content);
      if (contentBytes(w.content) > noteLimits.maxContentBytes) return { ok: false, reason: `${w.path} is larger than ${noteLimits.maxContentBytes} bytes.` };
    }
    if (total > noteLimits.maxTransactionContentBytes) return { ok: false, reason: 'The action carries too much content.' };
  } catch (error) {
    if (error instanceof AppError) return { ok: false, reason: error.message };
    throw error;
  }
  return { ok: true };
}

export function toTransaction(action: ProposedAction): TransactionAction[] {
  return action.kind === 'note.write'
    ? [{ type: 'write-note', path: action.path.normalize('NFC'), content: action.content, expectedHash: action.expectedHash }]
    : action.actions.map((a) => ({ ...a, path: a.path.normalize('NFC') }));
}

/** What each target looked like before Forge acted (null: it did not exist). */
export type UndoPlan = { mappingId: string; entries: Array<{ path: string; before: { content: string; revision: string } | null }> };

async function targetOf(db: Db, action: ProposedAction) {
  const row = await db.maybeOne(sql.type(z.object({ vaultId: z.uuid() }))`SELECT vault_id AS "vaultId" FROM vault_mappings WHERE id = ${action.mappingId} AND revoked_at IS NULL`);
  if (!row) throw new AppError('mapping_not_found');
  return { vaultId: row.vaultId, mappingId: action.mappingId };
}

/**
 * Step 1 of an execution: record what every target looks like now, before acting. Written once;
 * a retried step finds the plan already there and keeps it.
 */
export async function recordUndoPlan(db: DatabasePool, proposalId: string): Promise<UndoPlan> {
  const proposal = await getProposal(db, proposalId);
  if (!proposal) throw new AppError('not_found', `No proposal ${proposalId}.`);
  const action = actionSchema.parse(proposal.action);
  const existing = await db.maybeOne(sql.type(z.object({ plan: z.unknown() }))`
    SELECT undo_plan AS plan FROM forge_executions WHERE proposal_id = ${proposalId} AND kind = 'apply' AND undo_plan IS NOT NULL`);
  if (existing) return existing.plan as UndoPlan;
  const target = await targetOf(db, action);
  const paths = toTransaction(action).map((a) => a.path);
  const current = new Map((await findNotes(db, target.vaultId, paths)).map((n) => [n.path, n]));
  const plan: UndoPlan = {
    mappingId: target.mappingId,
    entries: paths.map((path) => {
      const note = current.get(path);
      return { path, before: note ? { content: note.content, revision: note.revision } : null };
    }),
  };
  await db.query(sql.type(emptyRow)`
    INSERT INTO forge_executions (proposal_id, kind, undo_plan, attempts) VALUES (${proposalId}, 'apply', ${sql.jsonb(plan as never)}, 1)
    ON CONFLICT (proposal_id, kind) DO UPDATE SET undo_plan = coalesce(forge_executions.undo_plan, excluded.undo_plan), attempts = forge_executions.attempts + 1`);
  return plan;
}

export type Receipt = {
  proposalId: string;
  kind: 'apply' | 'undo';
  transactionId: string | null;
  changes: Array<{ path: string; operation: string; beforeRevision: string | null; afterRevision: string | null; eventId: string | null }>;
  completedAt: string;
};

/**
 * Step 2: apply through the knowledge core under the idempotency key `forge-<kind>-<proposalId>`, so
 * a retried or re-run step replays the first write instead of writing twice; then the receipt.
 */
export async function executeForgeStep(db: DatabasePool, proposalId: string, kind: 'apply' | 'undo'): Promise<Receipt> {
  const proposal = await getProposal(db, proposalId);
  if (!proposal) throw new AppError('not_found', `No proposal ${proposalId}.`);
  const action = actionSchema.parse(proposal.action);
  const target = await targetOf(db, action);
  const key = forgeIdempotencyKey(proposalId, kind);
  const provenance = { actor: { type: 'forge' as const, id: proposalId }, source: 'forge' as const, requestId: null, idempotencyKey: key };
  const idempotency = (suffix: string) => ({ accountId: proposal.proposerAccountId, route: 'forge', scope: target.mappingId, key: `${key}${suffix}`, fingerprint: `${key}${suffix}` });
  let writes: TransactionAction[];
  const deletes: Array<{ path: string; ifMatch: string }> = [];
  if (kind === 'apply') writes = toTransaction(action);
  else {
    const execution = await db.one(sql.type(z.object({ plan: z.unknown(), receipt: z.unknown() }))`
      SELECT undo_plan AS plan, receipt FROM forge_executions WHERE proposal_id = ${proposalId} AND kind = 'apply'`);
    const plan = execution.plan as UndoPlan;
    const applied = execution.receipt as Receipt | null;
    if (!applied) throw new AppError('conflict', 'Nothing was applied, so there is nothing to undo.');
    // Restore each prior state, on condition that the note is still what Forge left: notes that
    // existed get their old content back; notes Forge created go to the trash.
    const afterOf = (path: string) => applied.changes.find((c) => c.path === path)?.afterRevision ?? undefined;
    writes = plan.entries.filter((e) => e.before).map((e) => ({ type: 'write-note', path: e.path, content: e.before!.content, expectedHash: afterOf(e.path) }));
    for (const e of plan.entries.filter((x) => !x.before)) deletes.push({ path: e.path, ifMatch: afterOf(e.path) ?? '' });
  }
  // One knowledge transaction: restoring writes and trashing deletes commit together or not at all.
  const result = await applyTransaction(db, target, writes, provenance, idempotency(''), deletes.map((d) => ({ path: d.path, expectedHash: d.ifMatch })));
  const transactionId: string | null = result.body.transactionId;
  const changes: Receipt['changes'] = [
    ...result.body.results.map((r) => ({ path: r.path, operation: r.operation as string, beforeRevision: r.beforeRevision, afterRevision: r.afterRevision, eventId: r.eventId })),
    ...(result.body.deletions ?? []).map((d) => ({ path: d.path, operation: 'delete', beforeRevision: d.beforeRevision, afterRevision: null, eventId: d.eventId })),
  ];
  const receipt: Receipt = { proposalId, kind, transactionId, changes, completedAt: new Date().toISOString() };
  await db.query(sql.type(emptyRow)`
    INSERT INTO forge_executions (proposal_id, kind, state, receipt, finished_at, attempts) VALUES (${proposalId}, ${kind}, 'succeeded', ${sql.jsonb(receipt as never)}, now(), 1)
    ON CONFLICT (proposal_id, kind) DO UPDATE SET state = 'succeeded', receipt = coalesce(forge_executions.receipt, excluded.receipt), finished_at = coalesce(forge_executions.finished_at, now())`);
  return (await db.one(sql.type(z.object({ receipt: z.unknown() }))`SELECT receipt FROM forge_executions WHERE proposal_id = ${proposalId} AND kind = ${kind}`)).receipt as Receipt;
}

/**
 * One Forge execution (apply or undo) as one step: mark it running, record the undo plan (apply),
 * write through the knowledge core and keep the receipt, mark it done. Every part is idempotent (a
 * compare-and-set move, a plan written once, a write replayed under its key, a receipt kept once),
 * so a step retried after a worker died anywhere in it writes nothing twice.
 * `afterWrite` runs once the write committed, before the step reports back (tests crash a worker there).
 */
export async function runForgeExecution(
  db: DatabasePool,
  input: { proposalId: string; kind: 'apply' | 'undo'; actorAccountId: string | null },
  afterWrite?: (proposalId: string) => Promise<void>,
): Promise<Receipt> {
  const { proposalId, kind } = input;
  await transitionProposal(db, { proposalId, state: kind === 'apply' ? 'executing' : 'undoing', actorAccountId: input.actorAccountId });
  if (kind === 'apply') await recordUndoPlan(db, proposalId);
  const receipt = await executeForgeStep(db, proposalId, kind);
  await afterWrite?.(proposalId);
  await transitionProposal(db, { proposalId, state: kind === 'apply' ? 'executed' : 'undone', detail: { transactionId: receipt.transactionId } });
  return receipt;
}

/**
 * Records a failed Forge execution and where it leaves the proposal: a failed apply is failed; a
 * failed undo leaves the applied change in place, so the proposal is executed again.
 */
export async function recordForgeFailure(db: DatabasePool, input: { proposalId: string; kind: 'apply' | 'undo'; code: string; message: string }): Promise<ProposalState> {
  const state: ProposalState = input.kind === 'apply' ? 'failed' : 'executed';
  const error = { code: input.code, message: input.message };
  await db.transaction(async (tx) => {
    await tx.query(sql.type(emptyRow)`
      INSERT INTO forge_executions (proposal_id, kind, state, error, finished_at) VALUES (${input.proposalId}, ${input.kind}, 'failed', ${sql.jsonb(error)}, now())
      ON CONFLICT (proposal_id, kind) DO UPDATE SET state = 'failed', error = excluded.error, finished_at = now()`);
    await transitionProposal(tx, { proposalId: input.proposalId, state, detail: { ...error, kind: input.kind } });
  });
  return state;
}

export const executionSchema = z.object({
  kind: z.enum(['apply', 'undo']),
  state: z.enum(['running', 'succeeded', 'failed']),
  undoPlan: z.unknown(),
  receipt: z.unknown(),
  error: z.unknown(),
  attempts: z.number(),
  startedAt: isoTimestamp,
  finishedAt: isoTimestamp.nullable(),
});

export async function proposalExecutions(db: Db, proposalId: string) {
  return db.any(sql.type(executionSchema)`
    SELECT kind, state, undo_plan AS "undoPlan", receipt, error, attempts, started_at AS "startedAt", finished_at AS "finishedAt"
      FROM forge_executions WHERE proposal_id = ${proposalId} ORDER BY started_at`);
}

