// The Forge executor's steps: an approved action applied through the knowledge core, recording an
// undo plan first and a receipt after; an undo is a new compensating write from that plan, never a
// database rollback. The plan and the receipt are stored as JSON and parsed with their schemas
// whenever they are read back.
import { sql } from 'slonik';
import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { z } from 'zod';
import { emptyRow } from '../../db/row-schemas.ts';
import { AppError } from '../errors.ts';
import { applyTransaction, replayTransaction } from '../notes/knowledge.ts';
import type { TransactionAction, TransactionApplied } from '../notes/knowledge.ts';
import { findNotes } from '../notes/store.ts';
import { actionSchema, toTransaction } from './catalog.ts';
import { promoteMemory, removePromotedMemory } from '../context-scopes/memory.ts';
import { transitionProposal, transitionSteps } from './proposal-states.ts';
import type { ProposalState, Transition } from './proposal-states.ts';
import { proposalColumns, proposalSchema } from './proposals.ts';
import type { Proposal } from './proposals.ts';
import { decisionTransition } from './review-rules.ts';
import { forgeIdempotencyKey } from './workflow-ids.ts';

type Db = CommonQueryMethods;

/**
 * What each target looked like before Forge acted (null: it did not exist). A memory promotion
 * creates its memory fresh, so its plan says only which scope the undo removes it from.
 */
export const undoPlanSchema = z.union([
  z.object({
    mappingId: z.string(),
    entries: z.array(z.object({ path: z.string(), before: z.object({ content: z.string(), revision: z.string() }).nullable() })),
  }),
  z.object({ memory: z.object({ scopeId: z.string(), before: z.null() }) }),
]);
export type UndoPlan = z.infer<typeof undoPlanSchema>;

/** What an execution did: every change with its revisions and event, and the knowledge transaction. */
export const receiptSchema = z.object({
  proposalId: z.string(),
  kind: z.enum(['apply', 'undo']),
  transactionId: z.string().nullable(),
  changes: z.array(z.object({ path: z.string(), operation: z.string(), beforeRevision: z.string().nullable(), afterRevision: z.string().nullable(), eventId: z.string().nullable() })),
  completedAt: z.string(),
});
export type Receipt = z.infer<typeof receiptSchema>;

/** What an execution acts on: the proposal, its action, and for a note action the vault it targets (read once per execution). */
type Subject = { proposal: Proposal; action: ReturnType<typeof actionSchema.parse>; target: { vaultId: string; mappingId: string } | null };

/**
 * The proposal, its target (the mapping's vault while the mapping stands; null once revoked) and
 * whether the apply's undo plan was written (by an earlier attempt of this step), in one read.
 */
async function subjectOf(db: Db, proposalId: string): Promise<Subject & { planned: boolean }> {
  const row = await db.maybeOne(sql.type(proposalSchema.extend({ targetVaultId: z.uuid().nullable(), planned: z.boolean() }))`
    SELECT ${proposalColumns},
           (SELECT m.vault_id FROM vault_mappings m WHERE m.id = (p.action->>'mappingId')::uuid AND m.revoked_at IS NULL) AS "targetVaultId",
           EXISTS (SELECT FROM forge_executions f WHERE f.proposal_id = p.id AND f.kind = 'apply' AND f.undo_plan IS NOT NULL) AS planned
      FROM action_proposals p WHERE p.id = ${proposalId}`);
  if (!row) throw new AppError('not_found', `No proposal ${proposalId}.`);
  const { targetVaultId, planned, ...proposal } = row;
  const action = actionSchema.parse(proposal.action);
  if (action.kind === 'memory.promote') return { proposal, action, target: null, planned };
  return { proposal, action, target: targetVaultId ? { vaultId: targetVaultId, mappingId: action.mappingId } : null, planned };
}

/** The plan kept for the apply: this one, unless a plan was already written (a retried step keeps the first). */
const keepPlan = (db: Db, proposalId: string, plan: UndoPlan) =>
  db.oneFirst(sql.type(z.object({ plan: undoPlanSchema }))`
    INSERT INTO forge_executions AS f (proposal_id, kind, undo_plan, attempts) VALUES (${proposalId}, 'apply', ${sql.jsonb(plan)}, 1)
    ON CONFLICT (proposal_id, kind) DO UPDATE SET undo_plan = coalesce(f.undo_plan, excluded.undo_plan), attempts = f.attempts + 1
    RETURNING undo_plan AS plan`);

/** A retry that cannot read the targets again (the mapping is gone): counted as an attempt, answered with the plan written. */
const keptPlanAgain = (db: Db, proposalId: string) =>
  db.oneFirst(sql.type(z.object({ plan: undoPlanSchema }))`
    UPDATE forge_executions SET attempts = attempts + 1 WHERE proposal_id = ${proposalId} AND kind = 'apply' AND undo_plan IS NOT NULL RETURNING undo_plan AS plan`);

/**
 * Step 1 of an execution: record what every target looks like now, before acting. Written once;
 * a retried step keeps the plan already there (the targets it reads then may be Forge's own writes).
 */
async function recordUndoPlan(db: Db, { proposal, action, target }: Subject, planned: boolean): Promise<UndoPlan> {
  if (action.kind === 'memory.promote') return keepPlan(db, proposal.id, { memory: { scopeId: action.scopeId, before: null } });
  // The mapping was revoked after an earlier attempt of this step wrote its plan (and perhaps its note
  // write): the plan stands, and the write may be replayed (executeForgeStep).
  if (!target && planned) return keptPlanAgain(db, proposal.id);
  if (!target) throw new AppError('mapping_not_found');
  const paths = toTransaction(action).map((a) => a.path);
  const current = new Map((await findNotes(db, target.vaultId, paths)).map((n) => [n.path, n]));
  return keepPlan(db, proposal.id, {
    mappingId: target.mappingId,
    entries: paths.map((path) => {
      const note = current.get(path);
      return { path, before: note ? { content: note.content, revision: note.revision } : null };
    }),
  });
}

/**
 * Step 2: apply through the knowledge core under the idempotency key `forge-<kind>-<proposalId>`, so
 * a retried or re-run step replays the first write instead of writing twice; answers the receipt to keep.
 */
async function executeForgeStep(db: DatabasePool, { proposal, action, target }: Subject, kind: 'apply' | 'undo'): Promise<Receipt> {
  const proposalId = proposal.id;
  if (action.kind === 'memory.promote') {
    // Not a note write: the memory row, keyed by the proposal, so a re-run step writes nothing twice.
    const change = kind === 'apply' ? await promoteMemory(db, proposal, action) : await removePromotedMemory(db, proposal, action);
    return { proposalId, kind, transactionId: null, changes: [change], completedAt: new Date().toISOString() };
  }
  const key = forgeIdempotencyKey(proposalId, kind);
  // Forge's keys are its own (route `forge`), under the proposal's proposer, scoped by the mapping the action names.
  const owner = proposal.proposerAccountId ?? proposal.proposerPrincipalId ?? proposalId;
  const idempotency = { accountId: owner, route: 'forge', scope: action.mappingId, key, fingerprint: key };
  if (!target) {
    // The mapping was revoked. Nothing new is written through it; but a write an earlier attempt of
    // this step committed (its worker died before the step reported back, with or without the
    // receipt kept) is answered from its record, so an execution whose note was written is not
    // reported failed.
    const replayed = await replayTransaction(db, idempotency);
    if (!replayed) throw new AppError('mapping_not_found');
    return receiptOf(proposalId, kind, replayed);
  }
  const provenance = { actor: { type: 'forge' as const, id: proposalId }, source: 'forge' as const, requestId: null, idempotencyKey: key };
  let writes: TransactionAction[];
  const deletes: Array<{ path: string; ifMatch: string }> = [];
  if (kind === 'apply') writes = toTransaction(action);
  else {
    const execution = await db.one(sql.type(z.object({ plan: undoPlanSchema.nullable(), receipt: receiptSchema.nullable() }))`
      SELECT undo_plan AS plan, receipt FROM forge_executions WHERE proposal_id = ${proposalId} AND kind = 'apply'`);
    const { plan, receipt: applied } = execution;
    if (!plan || !applied || !('entries' in plan)) throw new AppError('conflict', 'Nothing was applied, so there is nothing to undo.');
    // Restore each prior state, on condition that the note is still what Forge left: notes that
    // existed get their old content back; notes Forge created go to the trash.
    const afterOf = (path: string) => applied.changes.find((c) => c.path === path)?.afterRevision ?? undefined;
    writes = plan.entries.flatMap((e) => (e.before ? [{ type: 'write-note' as const, path: e.path, content: e.before.content, expectedHash: afterOf(e.path) }] : []));
    for (const e of plan.entries.filter((x) => !x.before)) deletes.push({ path: e.path, ifMatch: afterOf(e.path) ?? '' });
  }
  // One knowledge transaction: restoring writes and trashing deletes commit together or not at all.
  const result = await applyTransaction(db, target, writes, provenance, idempotency, deletes.map((d) => ({ path: d.path, expectedHash: d.ifMatch })));
  return receiptOf(proposalId, kind, result.body);
}

/** The receipt of a knowledge transaction Forge applied (or replayed: completedAt is then the replay's time, the write's events keep theirs). */
function receiptOf(proposalId: string, kind: 'apply' | 'undo', applied: TransactionApplied): Receipt {
  const changes: Receipt['changes'] = [
    ...applied.results.map((r) => ({ path: r.path, operation: r.operation as string, beforeRevision: r.beforeRevision, afterRevision: r.afterRevision, eventId: r.eventId })),
    ...(applied.deletions ?? []).map((d) => ({ path: d.path, operation: 'delete', beforeRevision: d.beforeRevision, afterRevision: null, eventId: d.eventId })),
  ];
  return { proposalId, kind, transactionId: applied.transactionId, changes, completedAt: new Date().toISOString() };
}

/**
 * Stores an execution's receipt, once, and moves the proposal on (executed, undone) in the same
 * statement: the receipt kept (and returned) is the first one written (a re-run step finds it
 * there), and nobody reads the proposal done without it.
 */
async function keepReceipt(db: DatabasePool, receipt: Receipt, then: Transition): Promise<Receipt> {
  return db.oneFirst(sql.type(z.object({ receipt: receiptSchema }))`
    WITH ${transitionSteps(then)}, kept AS (
      INSERT INTO forge_executions AS f (proposal_id, kind, state, receipt, finished_at, attempts) VALUES (${receipt.proposalId}, ${receipt.kind}, 'succeeded', ${sql.jsonb(receipt)}, now(), 1)
      ON CONFLICT (proposal_id, kind) DO UPDATE SET state = 'succeeded', receipt = coalesce(f.receipt, excluded.receipt), finished_at = coalesce(f.finished_at, now())
      RETURNING receipt
    )
    SELECT receipt FROM kept`);
}

/** Where a test may stop a worker dead inside a step (activities/index.ts ActivityDeps). */
export type ForgeCrashPoints = { afterNoteWrite?: (written: Receipt) => Promise<void>; afterReceipt?: (proposalId: string) => Promise<void> };

/** One Forge execution's input; an apply that carries `approval` records it first (workflows/proposal-review.ts). */
export type ForgeStep = { proposalId: string; kind: 'apply' | 'undo'; actorAccountId: string | null; approval?: { reason: string | null } };

/**
 * One Forge execution (apply or undo) as one step: mark it running, record the undo plan (apply),
 * write through the knowledge core, keep the receipt and mark it done (one statement). Every part is idempotent (a
 * compare-and-set move, a plan written once, a write replayed under its key, a receipt kept once),
 * so a step retried after a worker died anywhere in it writes nothing twice.
 * `crashPoints` are where tests crash a worker: after the note write committed (before its receipt
 * is kept), and after the receipt (before the step reports back).
 */
export async function runForgeExecution(db: DatabasePool, input: ForgeStep, crashPoints: ForgeCrashPoints = {}): Promise<Receipt> {
  const { proposalId, kind } = input;
  // The approval this apply carries out, recorded unless the API already did (a compare-and-set from pending_review).
  if (kind === 'apply' && input.approval) {
    await transitionProposal(db, decisionTransition(proposalId, 'approve', input.actorAccountId, input.approval.reason));
  }
  await transitionProposal(db, { proposalId, state: kind === 'apply' ? 'executing' : 'undoing', actorAccountId: input.actorAccountId });
  const { planned, ...subject } = await subjectOf(db, proposalId);
  if (kind === 'apply') await recordUndoPlan(db, subject, planned);
  const written = await executeForgeStep(db, subject, kind);
  await crashPoints.afterNoteWrite?.(written);
  const receipt = await keepReceipt(db, written, { proposalId, state: kind === 'apply' ? 'executed' : 'undone', detail: { transactionId: written.transactionId } });
  await crashPoints.afterReceipt?.(proposalId);
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
