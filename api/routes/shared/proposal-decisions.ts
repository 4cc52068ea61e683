// Reading and deciding proposals on behalf of an account, shared by the two interfaces a person
// reviews through: the automation gateway (a bearer token) and the reviewer console (a session).
// The rules are the domain's (review-rules.ts, proposal-states.ts); this is their Temporal side:
// a decision is the review workflow's Update (it needs Temporal now: bounded, else 503), an undo a
// Forge workflow recorded with its claim and started at once or by the relay.
import { WithStartWorkflowOperation, WorkflowExecutionAlreadyStartedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { FastifyBaseLogger } from 'fastify';
import type { DatabasePool } from 'slonik';
import { claimUndo, recordDecision } from '../../../domain/automation/proposal-states.ts';
import { undoStart } from '../../../domain/automation/workflow-ids.ts';
import { visibleProposal } from '../../../domain/automation/proposals.ts';
import { decisionRefusal, decisionTransition } from '../../../domain/automation/review-rules.ts';
import { AppError } from '../../../domain/errors.ts';
import { decideUpdate, proposalReview } from '../../../workflows/proposal-review.ts';
import { boundedTemporalCall, reviewStartOptions, startRecorded } from './workflow-starts.ts';
import type { WorkflowStarter } from './workflow-starts.ts';

export type Decision = { proposalId: string; accountId: string; actingForAccountId: string | null; decision: 'approve' | 'reject'; reason: string | null };

/**
 * Approves or rejects a pending proposal: the domain's rule first (clean 403s), then the review
 * workflow's Update, whose validator applies the same rule again and refuses a late decision.
 */
export async function decideProposal(starter: WorkflowStarter, input: Decision): Promise<{ id: string; state: 'approved' | 'rejected' }> {
  const { db, temporal } = starter;
  const { object: proposal, permissions } = await visibleProposal(db, input.proposalId, input.accountId, 'automation.view');
  const reviewer = { accountId: input.accountId, actingForAccountId: input.actingForAccountId, permissions };
  const refusal = decisionRefusal(proposal, reviewer);
  if (refusal) throw new AppError(refusal.code, refusal.message);
  if (proposal.state !== 'pending_review') throw new AppError('proposal_not_pending', `The proposal is ${proposal.state}.`, { extensions: { state: proposal.state } });
  try {
    // Bounded: Temporal unreachable or past the deadline is 503, the decision not confirmed (reading
    // the proposal tells whether it landed; deciding again is refused once it has).
    const outcome = await boundedTemporalCall(
      temporal,
      'The review workflow did not answer in time; the decision was not confirmed. Read the proposal, then decide again if it is still pending.',
      // One call whether or not the review has started: its start is made after the proposal's 201,
      // or by the relay when Temporal was away, and a decision that comes first starts it
      // (update-with-start, the same start options; USE_EXISTING attaches to a running review).
      () =>
        temporal.workflow.executeUpdateWithStart(decideUpdate, {
          args: [{ decision: input.decision, reviewer, reason: input.reason }],
          startWorkflowOperation: new WithStartWorkflowOperation(proposalReview, reviewStartOptions(starter.taskQueue, proposal)),
        }),
    );
    // The decision is recorded in Temporal now; the database learns it here, before the answer (a
    // read after it sees the decision), and from the workflow's next step if this process stops first.
    // The review exists now too, whoever started it: its recorded start is made (the relay skips it).
    await recordDecision(db, decisionTransition(proposal.id, input.decision, input.accountId, input.reason), proposal.workflowId);
    return { id: proposal.id, state: outcome.state };
  } catch (error) {
    // The validator is the second line: it refuses the same things, and a late decision.
    if (error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure) {
      const code = error.cause.type === 'self_approval_forbidden' || error.cause.type === 'permission_denied' ? error.cause.type : 'proposal_not_pending';
      throw new AppError(code, error.cause.message);
    }
    // Its review closed between our read and the call (it expired): never started again.
    if (error instanceof WorkflowExecutionAlreadyStartedError) throw new AppError('proposal_not_pending', 'The review of this proposal has ended.');
    throw error;
  }
}

/**
 * Undoes an executed proposal: claimed in Postgres first (the domain's compare-and-set), so two undo
 * requests cannot both start one and readers see undoing at once; each claim names its own undo
 * workflow and records its start in the same transaction, so a claimed undo always runs (at once,
 * or by the relay when Temporal is back).
 */
export async function undoProposal(
  db: DatabasePool,
  starter: WorkflowStarter,
  log: FastifyBaseLogger,
  input: { proposalId: string; accountId: string },
): Promise<{ id: string; state: 'undoing'; workflowId: string }> {
  const { object: proposal, permissions } = await visibleProposal(db, input.proposalId, input.accountId, 'automation.review');
  // Undoing is a decision too: never the proposer or anyone acting for them.
  const refusal = decisionRefusal(proposal, { accountId: input.accountId, actingForAccountId: null, permissions });
  if (refusal) throw new AppError(refusal.code, refusal.message);
  const workflowId = await claimUndo(db, proposal.id, input.accountId);
  if (!workflowId) throw new AppError('proposal_not_executed', `The proposal is ${proposal.state}.`, { extensions: { state: proposal.state } });
  await startRecorded(starter, [undoStart({ proposalId: proposal.id, workflowId, actorAccountId: input.accountId })], log);
  return { id: proposal.id, state: 'undoing', workflowId };
}
