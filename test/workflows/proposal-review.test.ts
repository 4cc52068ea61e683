// The proposal review workflow with stubbed activities on the time-skipping server: an unreviewed
// proposal expires in skipped time (days, in a test that has 30 s), the decision Update's validator
// refuses the proposer, anyone acting for a party, a reviewer without automation.review and a late
// decision (refused Updates leave no trace in history), and an approval runs the Forge execution in
// the same workflow. The HTTP side (the API's pre-check, receipts, undo) is in automation-proposals.test.ts.
import { randomUUID } from 'node:crypto';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { decideUpdate } from '../../workflows/proposal-review.ts';
import type { Decision, ReviewInput, Reviewer } from '../../workflows/proposal-review.ts';
import { useTimeSkipping } from '../support/time-skipping.ts';
import { opened, proposalStateOf, reviewInput, startReview, stubs } from './proposal-support.ts';

const temporal = useTimeSkipping();

const reviewer = (overrides: Partial<Reviewer> = {}): Reviewer => ({ accountId: randomUUID(), actingForAccountId: null, permissions: ['automation.view', 'automation.review'], ...overrides });
const decide = (decision: Decision['decision'], who: Reviewer, reason: string | null = null): [Decision] => [{ decision, reviewer: who, reason }];

/** The ApplicationFailure type a refused decision Update carries. */
async function refusal(promise: Promise<unknown>): Promise<string | undefined> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkflowUpdateFailedError);
  const cause = (error as WorkflowUpdateFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  return (cause as ApplicationFailure).type ?? undefined;
}

describe('proposal review workflow', () => {
  it('expires an unreviewed proposal when its time is up, in skipped time', async () => {
    const { activities, calls } = stubs();
    const input = reviewInput({ expiresInMs: 7 * 24 * 3600_000 });
    await temporal.run(activities, async (run) => {
      const before = await run.env.currentTimeMs();
      const handle = await startReview(run, input);
      expect(await handle.result()).toBe('expired');
      // Seven days passed on the server's clock, which the test never waited for.
      expect((await run.env.currentTimeMs()) - before).toBeGreaterThanOrEqual(input.expiresInMs);
      expect(await proposalStateOf(handle)).toBe('expired');
      // Too late to decide: the workflow is closed.
      await expect(handle.executeUpdate(decideUpdate, { args: decide('approve', reviewer()) })).rejects.toThrow();
    });
    expect(calls.transitions.map((t) => t.state)).toEqual(['expired']);
    expect(calls.executions).toEqual([]);
  });

  it('refuses self-approval, agents acting for a party and reviewers without the permission', async () => {
    const { activities, calls } = stubs();
    const input = reviewInput({ actingForAccountId: randomUUID() });
    await temporal.run(activities, async (run) => {
      const handle = await startReview(run, input);
      await opened(handle);
      const update = (decision: Decision['decision'], who: Reviewer) => handle.executeUpdate(decideUpdate, { args: decide(decision, who) });

      expect(await refusal(update('approve', reviewer({ accountId: input.proposerAccountId })))).toBe('self_approval_forbidden');
      expect(await refusal(update('approve', reviewer({ accountId: input.actingForAccountId! })))).toBe('self_approval_forbidden');
      expect(await refusal(update('approve', reviewer({ actingForAccountId: input.proposerAccountId })))).toBe('self_approval_forbidden');
      expect(await refusal(update('reject', reviewer({ actingForAccountId: input.actingForAccountId })))).toBe('self_approval_forbidden');
      expect(await refusal(update('approve', reviewer({ permissions: ['automation.view'] })))).toBe('permission_denied');

      const decider = reviewer();
      expect(await handle.executeUpdate(decideUpdate, { args: decide('reject', decider, 'not now') })).toEqual({ state: 'rejected' });
      expect(await handle.result()).toBe('rejected');
      // The rejected review is closed: nothing can decide on it any more.
      await expect(update('approve', reviewer())).rejects.toThrow();
      // Refused Updates are not in history: only the accepted decision is.
      const history = await handle.fetchHistory();
      expect((history.events ?? []).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes)).toHaveLength(1);
      expect(calls.transitions).toEqual([{ state: 'rejected', actorAccountId: decider.accountId, reason: 'not now' }]);
    });
    expect(calls.executions).toEqual([]);
  });

  it("a product's proposal (no proposing account) is decided by any reviewer with the permission, and by nobody without it", async () => {
    const { activities, calls } = stubs();
    const input: ReviewInput = { ...reviewInput(), proposerAccountId: null };
    await temporal.run(activities, async (run) => {
      const handle = await startReview(run, input);
      await opened(handle);
      expect(await refusal(handle.executeUpdate(decideUpdate, { args: decide('approve', reviewer({ permissions: ['automation.view'] })) }))).toBe('permission_denied');
      const decider = reviewer();
      expect(await handle.executeUpdate(decideUpdate, { args: decide('reject', decider, 'not shared') })).toEqual({ state: 'rejected' });
      expect(await handle.result()).toBe('rejected');
      expect(calls.transitions).toEqual([{ state: 'rejected', actorAccountId: decider.accountId, reason: 'not shared' }]);
    });
  });

  it('approves and runs the Forge apply in the same workflow, recording who approved; a second decision is refused', async () => {
    // The apply waits until the test has tried a second decision while the review is still open.
    let release!: () => void;
    const applying = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const applyStarted = new Promise<void>((resolve) => (started = resolve));
    const { activities, calls } = stubs({
      execute: async () => {
        started();
        await applying;
        return 'tx-1';
      },
    });
    const input = reviewInput();
    const approver = reviewer();
    await temporal.run(activities, async (run) => {
      const handle = await startReview(run, input);
      await opened(handle);
      expect(await proposalStateOf(handle)).toBe('pending_review');
      expect(await handle.executeUpdate(decideUpdate, { args: decide('approve', approver, 'looks right') })).toEqual({ state: 'approved' });
      await applyStarted;
      expect(await refusal(handle.executeUpdate(decideUpdate, { args: decide('reject', reviewer()) }))).toBe('proposal_not_pending');
      release();
      expect(await handle.result()).toBe('executed');
      expect((await handle.describe()).status.name).toBe('COMPLETED');
      expect(await proposalStateOf(handle)).toBe('executed');
      // No child workflow: the apply is an activity of the review.
      const history = await handle.fetchHistory();
      expect((history.events ?? []).filter((e) => e.startChildWorkflowExecutionInitiatedEventAttributes)).toEqual([]);
    });
    expect(calls.transitions).toEqual([{ state: 'approved', actorAccountId: approver.accountId, reason: 'looks right' }]);
    expect(calls.executions).toEqual([{ kind: 'apply', actorAccountId: approver.accountId }]);
  });

  it('completes as rejected when policy refuses the proposal, before anyone reviews it', async () => {
    const { activities, calls } = stubs({ opened: 'rejected' });
    await temporal.run(activities, async (run) => {
      const handle = await startReview(run, reviewInput());
      expect(await handle.result()).toBe('rejected');
      expect(await proposalStateOf(handle)).toBe('rejected');
    });
    expect(calls.transitions).toEqual([]);
    expect(calls.executions).toEqual([]);
  });
});
