// Who may decide on a proposal. A domain rule with two callers that must agree: the API's pre-check
// (clean 403s) and the review workflow's Update validator (the second line, which also refuses a
// late decision). Pure and synchronous — validators cannot be async — so workflow code can import it.
import type { Transition } from './proposal-states.ts';

export type Reviewer = {
  accountId: string;
  /** The person an agent reviewer acts for, if any. */
  actingForAccountId: string | null;
  /** The reviewer's permissions in the proposal's workspace, as the API resolved them. */
  permissions: readonly string[];
};

/** The longest reason a decision may carry, in characters (the gateway and the console). */
export const decisionReasonMaxChars = 2_000;

export type DecisionRefusal = { code: 'self_approval_forbidden' | 'permission_denied'; message: string };

/**
 * Whether `reviewer` may decide on (approve, reject or undo) a proposal: never the proposer, the
 * person it acts for, nor anyone acting for either; and only with automation.review. A proposal of
 * a Product Runtime service principal (proposerAccountId null) is decided by a person; a service
 * principal is never a reviewer (it has no route to decide).
 */
export function decisionRefusal(proposal: { proposerAccountId: string | null; actingForAccountId: string | null }, reviewer: Reviewer): DecisionRefusal | null {
  const parties = new Set([proposal.proposerAccountId, proposal.actingForAccountId].filter((id): id is string => !!id));
  if (parties.has(reviewer.accountId) || (reviewer.actingForAccountId && parties.has(reviewer.actingForAccountId))) {
    return { code: 'self_approval_forbidden', message: 'The proposer, or anyone acting for or on behalf of them, cannot decide on this proposal.' };
  }
  if (!reviewer.permissions.includes('automation.review')) return { code: 'permission_denied', message: 'Deciding needs the automation.review permission.' };
  return null;
}

/**
 * The state write a decision makes, for each of its writers (decision 94: the API once the Update
 * answered, the Forge apply that carries out an approval, the review's step for a rejection).
 */
export function decisionTransition(proposalId: string, decision: 'approve' | 'reject', reviewerAccountId: string | null, reason: string | null): Transition {
  return { proposalId, state: decision === 'approve' ? 'approved' : 'rejected', actorAccountId: reviewerAccountId, reason, detail: { by: 'reviewer' } };
}
