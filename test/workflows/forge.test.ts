// The Forge execution with stubbed activities on the time-skipping server: a failed apply (inside
// the review) and a failed undo (its own workflow) record the failure first and then fail their
// workflow with a typed ApplicationFailure (the stable code as its type), so describe() — what an
// operator sees — says FAILED, and ProposalState says where the proposal was left.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { decideUpdate } from '../../workflows/proposal-review.ts';
import { useTimeSkipping } from '../support/time-skipping.ts';
import { expectTypedFailure } from '../support/workflow-failures.ts';
import { opened, proposalStateOf, reviewInput, startReview, startUndo, stubs } from './proposal-support.ts';

const temporal = useTimeSkipping();

/** A domain refusal as the activity reports it: final, typed with its stable code. */
const stale = async (): Promise<never> => {
  throw ApplicationFailure.nonRetryable('The note changed since the proposal was made.', 'revision_conflict', { code: 'revision_conflict' });
};

describe('Forge execution', () => {
  it('fails the review with the typed failure when the apply fails, after recording the failed state', async () => {
    const { activities, calls } = stubs({ execute: stale });
    const input = reviewInput();
    await temporal.run(activities, async (run) => {
      const handle = await startReview(run, input);
      await opened(handle);
      await handle.executeUpdate(decideUpdate, { args: [{ decision: 'approve', reviewer: { accountId: randomUUID(), actingForAccountId: null, permissions: ['automation.review'] }, reason: null }] });
      await expectTypedFailure(handle, 'revision_conflict', { proposalId: input.proposalId, kind: 'apply' });
      expect(await proposalStateOf(handle)).toBe('failed');
    });
    // A domain refusal is final: one attempt, then the failure is recorded.
    expect(calls.executions.map((e) => e.kind)).toEqual(['apply']);
    expect(calls.failures).toEqual([{ kind: 'apply', code: 'revision_conflict', message: 'The note changed since the proposal was made.' }]);
  });

  it('fails the undo workflow with the typed failure when the undo fails, leaving the proposal executed', async () => {
    const { activities, calls } = stubs({ execute: stale });
    const proposalId = randomUUID();
    const actor = randomUUID();
    await temporal.run(activities, async (run) => {
      const handle = await startUndo(run, proposalId, actor);
      await expectTypedFailure(handle, 'revision_conflict', { proposalId, kind: 'undo' });
      expect(await proposalStateOf(handle)).toBe('executed');
    });
    expect(calls.executions).toEqual([{ kind: 'undo', actorAccountId: actor }]);
    expect(calls.failures).toEqual([{ kind: 'undo', code: 'revision_conflict', message: 'The note changed since the proposal was made.' }]);
  });

  it('completes an undo with its transaction id', async () => {
    const { activities, calls } = stubs({ execute: async () => 'tx-undo' });
    await temporal.run(activities, async (run) => {
      const handle = await startUndo(run, randomUUID(), randomUUID());
      expect(await handle.result()).toEqual({ ok: true, transactionId: 'tx-undo' });
      expect(await proposalStateOf(handle)).toBe('undone');
    });
    expect(calls.failures).toEqual([]);
  });

  it('retries a step that died for a transient reason, in skipped time, and records nothing as failed', async () => {
    let attempts = 0;
    const { activities, calls } = stubs({
      execute: async () => {
        if (++attempts < 4) throw new Error('the worker lost its database connection');
        return 'tx-after-retries';
      },
    });
    await temporal.run(activities, async (run) => {
      const handle = await startUndo(run, randomUUID(), randomUUID());
      expect(await handle.result()).toEqual({ ok: true, transactionId: 'tx-after-retries' });
    });
    expect(attempts).toBe(4);
    expect(calls.failures).toEqual([]);
  });
});
