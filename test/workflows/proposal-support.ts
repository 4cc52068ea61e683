// Shared by the review and Forge workflow tests: stub activities that record what the workflows
// asked of them, and starts the way the API starts these workflows (api/routes/automation/proposals.ts).
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import type { ProposalState as State } from '../../domain/automation/proposal-states.ts';
import { reviewWorkflowId, undoWorkflowId } from '../../domain/automation/workflow-ids.ts';
import { AccountId, ActionKind, ProposalState, WorkspaceId } from '../../workflows/search-attributes.ts';
import { forgeExecution } from '../../workflows/forge.ts';
import { proposalReview, stateQuery } from '../../workflows/proposal-review.ts';
import type { ReviewInput } from '../../workflows/proposal-review.ts';
import type { StubActivities, TimeSkippingRun } from '../support/time-skipping.ts';

export type Calls = {
  transitions: Array<{ state: State; actorAccountId?: string | null; reason?: string | null }>;
  executions: Array<{ kind: 'apply' | 'undo'; actorAccountId: string | null }>;
  failures: Array<{ kind: 'apply' | 'undo'; code: string; message: string }>;
};

/**
 * Stub activities: policy answers `opened` (after `opening`, when given); each Forge execution runs `execute` (a receipt's
 * transaction id, or a throw); a recorded failure answers where the domain leaves the proposal.
 */
export function stubs(options: { opened?: 'pending_review' | 'rejected'; opening?: () => Promise<void>; execute?: (kind: 'apply' | 'undo') => Promise<string | null> } = {}) {
  const calls: Calls = { transitions: [], executions: [], failures: [] };
  const activities: StubActivities = {
    async openReview() {
      await options.opening?.();
      return options.opened === 'rejected' ? { state: 'rejected', reason: 'The target mapping is not a vault of this workspace.' } : { state: 'pending_review' };
    },
    async transitionProposal(input) {
      calls.transitions.push({ state: input.state, actorAccountId: input.actorAccountId, reason: input.reason });
    },
    async executeForge(input) {
      // The activity records the approval it carries out first, as the domain's runForgeExecution does.
      if (input.approval) calls.transitions.push({ state: 'approved', actorAccountId: input.actorAccountId, reason: input.approval.reason });
      calls.executions.push({ kind: input.kind, actorAccountId: input.actorAccountId });
      return { transactionId: await (options.execute ?? (async () => 'tx-1'))(input.kind) };
    },
    async recordForgeFailure(input) {
      calls.failures.push({ kind: input.kind, code: input.code, message: input.message });
      return input.kind === 'apply' ? 'failed' : 'executed';
    },
  };
  return { activities, calls };
}

/** A person's proposal (a product's has proposerAccountId null: proposal-review.test.ts covers it). */
export function reviewInput(overrides: Partial<ReviewInput> & { proposerAccountId?: string } = {}): ReviewInput & { proposerAccountId: string } {
  return { proposalId: randomUUID(), proposerAccountId: randomUUID(), actingForAccountId: null, expiresInMs: 7 * 24 * 3600_000, ...overrides };
}

const attributes = (workspaceId: string, state: State, accountId: string | null) => [
  { key: WorkspaceId, value: workspaceId },
  { key: ActionKind, value: 'note.write' },
  { key: ProposalState, value: state },
  ...(accountId ? [{ key: AccountId, value: accountId }] : []),
];

export const startReview = ({ client, taskQueue }: TimeSkippingRun, input: ReviewInput, options: { workflowTaskTimeout?: string } = {}) =>
  client.workflow.start(proposalReview, {
    ...options,
    taskQueue,
    workflowId: reviewWorkflowId(input.proposalId),
    args: [input],
    // As the API starts it: the state the proposal is stored in.
    typedSearchAttributes: attributes(randomUUID(), input.openedAs ?? 'proposed', input.proposerAccountId),
  });

export const startUndo = ({ client, taskQueue }: TimeSkippingRun, proposalId: string, actorAccountId: string) =>
  client.workflow.start(forgeExecution, {
    taskQueue,
    workflowId: undoWorkflowId(proposalId, 1),
    args: [{ proposalId, kind: 'undo', actorAccountId }],
    typedSearchAttributes: attributes(randomUUID(), 'undoing', actorAccountId),
  });

/** Waits (in workflow tasks, not in time) until the review has opened (a decision before that waits for it). */
export async function opened(handle: WorkflowHandle<typeof proposalReview>): Promise<void> {
  // A query before the first workflow task completed is refused; ask again.
  while ((await handle.query(stateQuery).catch(() => null)) !== 'pending_review') await new Promise((r) => setTimeout(r, 20));
}

/** The ProposalState search attribute as an operator sees it. */
export async function proposalStateOf(handle: WorkflowHandle): Promise<unknown> {
  return (await handle.describe()).typedSearchAttributes.get(ProposalState);
}

/** A step a test holds: `run` marks it begun and waits until the test calls `release`. */
export function heldStep(): { run: () => Promise<void>; begun: Promise<void>; release: () => void } {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let begin!: () => void;
  const begun = new Promise<void>((resolve) => (begin = resolve));
  return {
    run: async () => {
      begin();
      await released;
    },
    begun,
    release,
  };
}
