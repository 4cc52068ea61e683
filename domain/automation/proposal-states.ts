// Proposal states and their one writer. Every state change — by the review and Forge workflows'
// activities, and the undo claim the API makes — goes through `transitionProposal`: a
// compare-and-set along the edges below that appends the history entry in the same statement.
// States (docs/automation.md):
//   proposed → pending_review → approved → executing → executed → undoing → undone
//                             ↘ rejected | expired          ↘ failed
import { sql } from 'slonik';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { emptyRow, idRow } from '../../db/row-schemas.ts';
import { undoStart, undoWorkflowId } from './workflow-ids.ts';
import { markStartedStatement, recordStartIntents } from '../workflow-intents.ts';

type Db = CommonQueryMethods;

export const proposalStates = ['proposed', 'pending_review', 'approved', 'rejected', 'expired', 'executing', 'executed', 'failed', 'undoing', 'undone'] as const;
export const proposalStateSchema = z.enum(proposalStates);
export type ProposalState = z.infer<typeof proposalStateSchema>;

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

export type Transition = { proposalId: string; state: ProposalState; actorAccountId?: string | null; detail?: Record<string, unknown>; reason?: string | null };

/**
 * Moves a proposal to `state` along an allowed edge and appends the history entry; true when it
 * moved. A repeat of the same move, or a move from a state that does not lead there, changes nothing.
 */
export async function transitionProposal(db: Db, input: Transition): Promise<boolean> {
  const moved = await db.maybeOne(sql.type(idRow)`WITH ${transitionSteps(input)} SELECT id FROM moved`);
  return moved !== null;
}

/**
 * A decision the review workflow accepted, written by the API (decision 94), with its review's start
 * marked made (whoever made it, the relay then skips it): one statement. The move is a no-op when
 * the review's own step wrote it first; the mark still lands.
 */
export async function recordDecision(db: Db, decision: Transition, reviewWorkflowId: string): Promise<void> {
  await db.query(sql.type(emptyRow)`WITH ${transitionSteps(decision)}, started AS (${markStartedStatement([reviewWorkflowId])}) SELECT`);
}

/**
 * The transition as the first steps of a statement (`moved`, the proposal's id when it moved, and
 * its history entry), for a writer whose own row must land with the move (Forge's receipt).
 */
export function transitionSteps(input: Transition) {
  return sql.fragment`moved AS (
      UPDATE action_proposals SET state = ${input.state}, updated_at = now(),
             reviewer_account_id = CASE WHEN ${input.state} IN ('approved', 'rejected') THEN ${input.actorAccountId ?? null}::uuid ELSE reviewer_account_id END,
             decision_reason = coalesce(${input.reason ?? null}, decision_reason)
       WHERE id = ${input.proposalId} AND state = ANY (${sql.array([...allowedFrom[input.state]], 'text')})
      RETURNING id
    ), history AS (
      INSERT INTO action_proposal_history (proposal_id, state, actor_account_id, detail)
      SELECT id, ${input.state}, ${input.actorAccountId ?? null}, ${sql.jsonb((input.detail ?? {}) as never)} FROM moved
    )`;
}

/**
 * Claims the undo of an executed proposal (executed → undoing), once: the id of the undo workflow
 * to start (each claim its own, `forge-undo-<id>-<n>`, so a failed undo can be tried again), or
 * null when the proposal is not (or no longer) executed.
 */
export async function claimUndo(db: Db, proposalId: string, actorAccountId: string): Promise<string | null> {
  return db.transaction(async (tx) => {
    if (!(await transitionProposal(tx, { proposalId, state: 'undoing', actorAccountId }))) return null;
    const attempt = await tx.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM action_proposal_history WHERE proposal_id = ${proposalId} AND state = 'undoing'`);
    const workflowId = undoWorkflowId(proposalId, attempt);
    // The undo's start is recorded with the claim (the outbox): a claimed undo always runs.
    await recordStartIntents(tx, [undoStart({ proposalId, workflowId, actorAccountId })]);
    return workflowId;
  });
}

