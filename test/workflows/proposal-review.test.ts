// The proposal review workflow with stubbed activities on the time-skipping server: an unreviewed
// proposal expires in skipped time (days, in a test that has 30 s), the decision Update's validator
// refuses the proposer, anyone acting for a party, a reviewer without automation.review and a late
// decision (refused Updates leave no trace in history), and an approval runs the Forge execution in
// the same workflow. The HTTP side (the API's pre-check, receipts, undo) is in automation-proposals.test.ts.
import { randomUUID } from 'node:crypto';
import { WorkflowUpdateFailedError, WorkflowUpdateStage } from '@temporalio/client';
import type { WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { decideUpdate, stateQuery } from '../../workflows/proposal-review.ts';
import type { Decision, ReviewInput, Reviewer } from '../../workflows/proposal-review.ts';
import { useTimeSkipping } from '../support/time-skipping.ts';
import { heldStep, opened, proposalStateOf, reviewInput, startReview, stubs } from './proposal-support.ts';

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

/** The ProposalState values the workflow upserted, in its history's order. */
async function upsertedStates(handle: WorkflowHandle): Promise<string[]> {
  const { events } = await handle.fetchHistory();
  return (events ?? [])
    .flatMap((e) => {
      const field = e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.['ProposalState'];
      return field ? [field] : [];
    })
    .map((payload) => JSON.parse(Buffer.from(payload.data ?? new Uint8Array()).toString('utf8')) as string);
}

/** The stubs with their first step counted (it answers pending review). */
function countingOpenings(activities: ReturnType<typeof stubs>['activities']) {
  const openings: string[] = [];
  const counted: typeof activities = {
    ...activities,
    openReview: async (proposalId: string) => {
      openings.push(proposalId);
      return { state: 'pending_review' as const };
    },
  };
  return { counted, openings };
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

  // A local activity runs before the task that accepted the decision is recorded: a decision written
  // by one reached the database while Temporal could still lose it (it did in the outage drill).
  it('writes a decision only in a step scheduled after its acceptance is recorded', async () => {
    for (const decision of ['approve', 'reject'] as const) {
      const { activities, calls } = stubs();
      const decider = reviewer();
      await temporal.run(activities, async (run) => {
        const handle = await startReview(run, reviewInput());
        await opened(handle);
        await handle.executeUpdate(decideUpdate, { args: decide(decision, decider, 'why') });
        await handle.result();
        const events = (await handle.fetchHistory()).events ?? [];
        const accepted = events.findIndex((e) => e.workflowExecutionUpdateAcceptedEventAttributes);
        const writer = events.findIndex((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === (decision === 'approve' ? 'executeForge' : 'transitionProposal'));
        expect(accepted, decision).toBeGreaterThan(0);
        expect(writer, decision).toBeGreaterThan(accepted);
        // The only local activity is the policy step, before anyone could decide.
        const markers = events.flatMap((e, i) => (e.markerRecordedEventAttributes?.markerName === 'core_local_activity' ? [i] : []));
        expect(markers.length, decision).toBe(1);
        expect(markers[0]!, decision).toBeLessThan(accepted);
      });
      expect(calls.transitions[0], decision).toEqual({ state: decision === 'approve' ? 'approved' : 'rejected', actorAccountId: decider.accountId, reason: 'why' });
    }
  });

  // The database says pending_review once openReview's write commits, before the step's result is
  // back in the workflow (and, when Temporal or the worker stopped in between, until the step ran
  // again): the API's pre-check then lets a decision through to a workflow that is still opening.
  it('holds a decision that arrives while the review is still opening, and applies it once the review is open', async () => {
    const policy = heldStep();
    const { activities, calls } = stubs({ opening: policy.run });
    const input = reviewInput();
    const approver = reviewer();
    await temporal.run(activities, async (run) => {
      // A short task timeout: the worker reports the running step (and takes the Update) every ~0.8 s.
      const handle = await startReview(run, input, { workflowTaskTimeout: '1 second' });
      await policy.begun;
      const accepted = await handle.startUpdate(decideUpdate, { args: decide('approve', approver, 'fine'), waitForStage: WorkflowUpdateStage.ACCEPTED });
      expect(await handle.query(stateQuery)).toBe('proposed');
      policy.release();
      expect(await accepted.result()).toEqual({ state: 'approved' });
      expect(await handle.result()).toBe('executed');
    });
    expect(calls.transitions).toEqual([{ state: 'approved', actorAccountId: approver.accountId, reason: 'fine' }]);
    expect(calls.executions).toEqual([{ kind: 'apply', actorAccountId: approver.accountId }]);
  });

  it('answers a decision held while opening as not pending when the policy rejects the proposal, and closes the review', async () => {
    const policy = heldStep();
    const { activities, calls } = stubs({ opened: 'rejected', opening: policy.run });
    await temporal.run(activities, async (run) => {
      const handle = await startReview(run, reviewInput(), { workflowTaskTimeout: '1 second' });
      await policy.begun;
      const accepted = await handle.startUpdate(decideUpdate, { args: decide('approve', reviewer()), waitForStage: WorkflowUpdateStage.ACCEPTED });
      policy.release();
      expect(await refusal(accepted.result())).toBe('proposal_not_pending');
      expect(await handle.result()).toBe('rejected');
      expect((await handle.describe()).status.name).toBe('COMPLETED');
    });
    expect(calls.transitions).toEqual([]);
    expect(calls.executions).toEqual([]);
  });

  // A proposal is stored with its review opened (decision 96), and its start says so (decision 105).
  it('a review started as opened runs no first step: pending review at once, decided and applied as usual', async () => {
    const { activities, calls } = stubs();
    const { counted, openings } = countingOpenings(activities);
    const approver = reviewer();
    await temporal.run(counted, async (run) => {
      const handle = await startReview(run, reviewInput({ openedAs: 'pending_review' }));
      await opened(handle);
      expect(await proposalStateOf(handle)).toBe('pending_review');
      expect(await handle.executeUpdate(decideUpdate, { args: decide('approve', approver) })).toEqual({ state: 'approved' });
      expect(await handle.result()).toBe('executed');
    });
    expect(openings).toEqual([]);
    expect(calls.executions).toEqual([{ kind: 'apply', actorAccountId: approver.accountId }]);
  });

  // The API's starts set ProposalState and ask for upserts of its changes only (decision 109).
  it('a review started with stateAttribute "changes" upserts ProposalState only where it changes: executing and executed for an approval', async () => {
    const { activities } = stubs();
    const approver = reviewer();
    await temporal.run(activities, async (run) => {
      const approved = await startReview(run, reviewInput({ openedAs: 'pending_review', stateAttribute: 'changes' }));
      await opened(approved);
      expect(await proposalStateOf(approved)).toBe('pending_review');
      expect(await upsertedStates(approved)).toEqual([]);
      await approved.executeUpdate(decideUpdate, { args: decide('approve', approver) });
      expect(await approved.result()).toBe('executed');
      expect(await upsertedStates(approved)).toEqual(['executing', 'executed']);
      expect(await proposalStateOf(approved)).toBe('executed');

      const rejected = await startReview(run, reviewInput({ openedAs: 'pending_review', stateAttribute: 'changes' }));
      await opened(rejected);
      await rejected.executeUpdate(decideUpdate, { args: decide('reject', approver, 'no') });
      expect(await rejected.result()).toBe('rejected');
      expect(await upsertedStates(rejected)).toEqual(['rejected']);
      expect(await proposalStateOf(rejected)).toBe('rejected');

      const policyRejected = await startReview(run, reviewInput({ openedAs: 'rejected', stateAttribute: 'changes' }));
      expect(await policyRejected.result()).toBe('rejected');
      expect(await upsertedStates(policyRejected)).toEqual([]);
      expect(await proposalStateOf(policyRejected)).toBe('rejected');
      // Without the flag (a start from before), every step upserts, as its history recorded.
      const before = await startReview(run, reviewInput({ openedAs: 'pending_review' }));
      await opened(before);
      await before.executeUpdate(decideUpdate, { args: decide('approve', approver) });
      await before.result();
      expect(await upsertedStates(before)).toEqual(['pending_review', 'approved', 'executing', 'executed']);
    });
  });

  it('a review started as opened rejected closes at once, without a first step', async () => {
    const { activities } = stubs();
    const { counted, openings } = countingOpenings(activities);
    await temporal.run(counted, async (run) => {
      const handle = await startReview(run, reviewInput({ openedAs: 'rejected' }));
      expect(await handle.result()).toBe('rejected');
    });
    expect(openings).toEqual([]);
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
