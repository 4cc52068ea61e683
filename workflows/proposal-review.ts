// Review of one action proposal: policy check, then a reviewer's decision as a Workflow Update
// with a synchronous validator, or expiry; an approval starts the Forge execution as a child.
// Message definitions live here and are imported by the API.
import { ApplicationFailure, ChildWorkflowFailure, condition, defineQuery, defineUpdate, executeChild, proxyActivities, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import { forgeExecution } from './forge.ts';
import { ProposalState } from './search-attributes.ts';

const activities = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: { maximumInterval: '10 seconds' } });

export type ReviewInput = { proposalId: string; proposerAccountId: string; actingForAccountId: string | null; expiresInMs: number };

export type Reviewer = {
  accountId: string;
  /** The person an agent reviewer acts for, if any. */
  actingForAccountId: string | null;
  /** The reviewer's permissions in the proposal's workspace, as the API resolved them. */
  permissions: string[];
};
export type Decision = { decision: 'approve' | 'reject'; reviewer: Reviewer; reason: string | null };
export type DecisionOutcome = { state: 'approved' | 'rejected' };

export const decideUpdate = defineUpdate<DecisionOutcome, [Decision]>('decide');
export const stateQuery = defineQuery<string>('state');

/**
 * Whether `reviewer` may decide on a proposal. Pure and synchronous: it is the Update validator
 * (async validators are ignored) and the API's pre-check, so both refuse the same things.
 */
export function decisionRefusal(input: Pick<ReviewInput, 'proposerAccountId' | 'actingForAccountId'>, reviewer: Reviewer): { code: string; message: string } | null {
  const parties = new Set([input.proposerAccountId, input.actingForAccountId].filter((id): id is string => !!id));
  if (parties.has(reviewer.accountId) || (reviewer.actingForAccountId && parties.has(reviewer.actingForAccountId))) {
    return { code: 'self_approval_forbidden', message: 'The proposer, or anyone acting for or on behalf of them, cannot decide on this proposal.' };
  }
  if (!reviewer.permissions.includes('automation.review')) return { code: 'permission_denied', message: 'Deciding needs the automation.review permission.' };
  return null;
}

export async function proposalReview(input: ReviewInput): Promise<string> {
  let state = 'proposed';
  let decision: Decision | null = null;
  setHandler(stateQuery, () => state);
  setHandler(
    decideUpdate,
    (d) => {
      decision = d;
      return { state: d.decision === 'approve' ? 'approved' : 'rejected' };
    },
    {
      validator: (d) => {
        if (state !== 'pending_review' || decision) throw ApplicationFailure.nonRetryable(`The proposal is ${state}, not pending review.`, 'proposal_not_pending');
        const refusal = decisionRefusal(input, d.reviewer);
        if (refusal) throw ApplicationFailure.nonRetryable(refusal.message, refusal.code);
      },
    },
  );
  const move = async (next: string, extra: { actorAccountId?: string | null; detail?: Record<string, unknown>; reason?: string | null } = {}) => {
    state = next;
    await activities.transitionProposal({ proposalId: input.proposalId, state: next as never, ...extra });
    upsertSearchAttributes([{ key: ProposalState, value: next }]);
  };

  const policy = await activities.checkProposalPolicy(input.proposalId);
  if (!policy.ok) {
    await move('rejected', { detail: { by: 'policy', reason: policy.reason }, reason: policy.reason ?? null });
    return 'rejected';
  }
  await move('pending_review');
  const decided = await condition(() => decision !== null, input.expiresInMs);
  const made = decision as Decision | null;
  if (!decided || !made) {
    await move('expired');
    return 'expired';
  }
  if (made.decision === 'reject') {
    await move('rejected', { actorAccountId: made.reviewer.accountId, reason: made.reason, detail: { by: 'reviewer' } });
    return 'rejected';
  }
  await move('approved', { actorAccountId: made.reviewer.accountId, reason: made.reason, detail: { by: 'reviewer' } });
  try {
    await executeChild(forgeExecution, {
      workflowId: `forge-apply-${input.proposalId}`,
      // One execution per proposal, ever.
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      args: [{ proposalId: input.proposalId, kind: 'apply', actorAccountId: made.reviewer.accountId }],
    });
  } catch (error) {
    // The Forge execution recorded the failure and failed itself; the review, which did its part,
    // completes and says how the proposal ended.
    if (error instanceof ChildWorkflowFailure) {
      state = 'failed';
      return state;
    }
    throw error;
  }
  state = 'executed';
  return state;
}
