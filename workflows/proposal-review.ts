// Review of one action proposal: policy check, then a reviewer's decision as a Workflow Update
// with a synchronous validator, or expiry; an approval runs the Forge execution here, in the same
// workflow (a failed apply fails this workflow: visible as Failed). Message definitions live here
// and are imported by the API.
import { context } from '@opentelemetry/api';
import type { Context } from '@opentelemetry/api';
import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  defineQuery,
  defineUpdate,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { ProposalState as State } from '../domain/automation/proposal-states.ts';
// The decision rule is the domain's (pure, shared with the API's pre-check; listed workflow-safe in eslint.config.js).
import { decisionRefusal, decisionTransition } from '../domain/automation/review-rules.ts';
import type { Reviewer } from '../domain/automation/review-rules.ts';
import { runForge } from './forge.ts';
import { ProposalState } from './search-attributes.ts';

// The review's own steps are short state writes (a compare-and-set each, safe to repeat): local
// activities, run in the worker without a round trip through the server.
const stateWrites = proxyLocalActivities<Activities>({ startToCloseTimeout: '10 seconds', retry: { maximumInterval: '10 seconds' } });
// Except the decision's: a local activity runs before the task that accepted the decision is
// recorded, so a Temporal stop in between left the database decided and the workflow not (it waited
// for a decision no retry could send). A decision is written by a step scheduled after its
// acceptance is recorded (an approval by the Forge execution's first statement), and by the API once
// the Update answered (api/routes/shared/proposal-decisions.ts), whichever comes first.
const recordedStateWrites = proxyActivities<Activities>({ startToCloseTimeout: '10 seconds', retry: { maximumInterval: '10 seconds' } });
/** Histories from before the decision was written after its acceptance replay the local activity. */
const DECISION_AFTER_ACCEPTANCE = 'decision-written-after-acceptance';

/**
 * proposerAccountId is null when a Product Runtime service principal proposed (a memory candidate).
 * openedAs: how the proposal was stored when its review was opened with it (decision 96), as the
 * starter read it; absent (a start from before decision 105, or a proposal stored `proposed`), the
 * review's first step reads it, and opens one still proposed.
 */
export type ReviewInput = {
  proposalId: string;
  proposerAccountId: string | null;
  actingForAccountId: string | null;
  expiresInMs: number;
  openedAs?: 'pending_review' | 'rejected';
  /**
   * 'changes' (decision 109): the start set ProposalState to the state the proposal was stored in, so
   * the review upserts it only where it changes what an operator can see: not for the state the
   * start set, and not for `approved`, which the same workflow task replaces with `executing`.
   * Absent (starts from before): every step upserts, as those histories recorded.
   */
  stateAttribute?: 'changes';
};

export type { Reviewer };
export type Decision = { decision: 'approve' | 'reject'; reviewer: Reviewer; reason: string | null };
export type DecisionOutcome = { state: 'approved' | 'rejected' };

export const decideUpdate = defineUpdate<DecisionOutcome, [Decision]>('decide');
export const stateQuery = defineQuery<string>('state');

export async function proposalReview(input: ReviewInput): Promise<string> {
  let state: State = 'proposed';
  let decision: Decision | null = null;
  // The trace of the request that decided (docs/observability.md): what the decision causes (the
  // state write, Forge's execution) is traced there, not in the proposal's trace. Without tracing
  // this is OpenTelemetry's no-op context.
  let decidedIn: Context = context.active();
  setHandler(stateQuery, () => state);
  const notPending = () => ApplicationFailure.nonRetryable(`The proposal is ${state}, not pending review.`, 'proposal_not_pending');
  setHandler(
    decideUpdate,
    // A decision can arrive before this workflow knows the review is open: a proposal is stored
    // pending_review (decision 96; readers and the API's pre-check see it at once), and its first step
    // may not have run yet, or its task was lost (Temporal or the worker stopped) until it runs again.
    // The decision waits for the step instead of being refused as not pending.
    async (d) => {
      const requestContext = context.active();
      await condition(() => state !== 'proposed');
      if (state !== 'pending_review' || decision) throw notPending();
      decision = d;
      decidedIn = requestContext;
      return { state: d.decision === 'approve' ? 'approved' : 'rejected' };
    },
    {
      validator: (d) => {
        if ((state !== 'proposed' && state !== 'pending_review') || decision) throw notPending();
        const refusal = decisionRefusal(input, d.reviewer);
        if (refusal) throw ApplicationFailure.nonRetryable(refusal.message, refusal.code);
      },
    },
  );
  const move = async (next: State, extra: { actorAccountId?: string | null; detail?: Record<string, unknown>; reason?: string | null } = {}) => {
    state = next;
    await stateWrites.transitionProposal({ proposalId: input.proposalId, state: next, ...extra });
    upsertSearchAttributes([{ key: ProposalState, value: next }]);
  };

  // The review as it was opened with the proposal (pending_review, or rejected by policy), as its
  // start says, or read (and opened, for one stored proposed) by a first step. The choice follows
  // the input alone, so every history replays the commands it recorded.
  const opened = input.openedAs ? { state: input.openedAs } : await stateWrites.openReview(input.proposalId);
  state = opened.state;
  const changesOnly = input.stateAttribute === 'changes';
  if (!changesOnly || workflowInfo().typedSearchAttributes.get(ProposalState) !== state) upsertSearchAttributes([{ key: ProposalState, value: state }]);
  if (opened.state === 'rejected') {
    // A decision that arrived while the policy ran is answered (not pending) before the review closes.
    await condition(allHandlersFinished);
    return state;
  }

  const decided = await condition(() => decision !== null, input.expiresInMs);
  const made = decision as Decision | null;
  if (!decided || !made) {
    await move('expired');
    return 'expired';
  }
  return context.with(decidedIn, () => settle(made));

  async function settle(made: Decision): Promise<string> {
    const decided = decisionTransition(input.proposalId, made.decision, made.reviewer.accountId, made.reason);
    // A start asking for state changes (decision 109) is newer than the patch: no marker to record.
    if (!changesOnly && !patched(DECISION_AFTER_ACCEPTANCE)) {
      // A run from before decision 94: the decision was written by a local activity.
      await move(decided.state, decided);
      return decided.state === 'rejected' ? state : execute(made, undefined);
    }
    state = decided.state;
    // An approval moves on to `executing` in this same task (runForge upserts it).
    if (!changesOnly || decided.state === 'rejected') upsertSearchAttributes([{ key: ProposalState, value: state }]);
    if (decided.state === 'rejected') {
      await recordedStateWrites.transitionProposal(decided);
      return state;
    }
    return execute(made, { reason: made.reason });
  }

  /** The Forge apply of an approval (which it records first when given `approval`). */
  async function execute(made: Decision, approval: { reason: string | null } | undefined): Promise<string> {
    state = 'executing';
    try {
      await runForge({ proposalId: input.proposalId, kind: 'apply', actorAccountId: made.reviewer.accountId, ...(approval ? { approval } : {}) });
    } catch (error) {
      // The failure is recorded (proposal failed); the review fails with its typed ApplicationFailure.
      state = 'failed';
      throw error;
    }
    state = 'executed';
    return state;
  }
}
