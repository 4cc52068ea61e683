// The Forge executor: one bounded execution of an approved action (or its undo). Its workflow id
// is `forge-<kind>-<proposalId>` and the API never starts a second one, so a proposal executes once;
// each step is an idempotent activity (the write replays under its idempotency key), so retries and
// worker crashes cannot write twice.
import { ApplicationFailure, proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import { ProposalState } from './search-attributes.ts';

// Bounded steps: a note write takes milliseconds, so a worker that vanished mid-step is noticed
// (and the step retried elsewhere) within 10 s.
const steps = proxyActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds', maximumAttempts: 10 },
});

export type ForgeInput = { proposalId: string; kind: 'apply' | 'undo'; actorAccountId: string | null };
/** A Forge execution either completes with this, or fails with an ApplicationFailure whose type is the stable code. */
export type ForgeResult = { ok: true; transactionId: string | null };

export async function forgeExecution(input: ForgeInput): Promise<ForgeResult> {
  const running = input.kind === 'apply' ? 'executing' : 'undoing';
  const done = input.kind === 'apply' ? 'executed' : 'undone';
  await steps.transitionProposal({ proposalId: input.proposalId, state: running, actorAccountId: input.actorAccountId });
  upsertSearchAttributes([{ key: ProposalState, value: running }]);
  try {
    if (input.kind === 'apply') await steps.recordUndoPlan(input.proposalId);
    const receipt = input.kind === 'apply' ? await steps.forgeApply(input.proposalId) : await steps.forgeUndo(input.proposalId);
    await steps.transitionProposal({ proposalId: input.proposalId, state: done, detail: { transactionId: receipt.transactionId } });
    upsertSearchAttributes([{ key: ProposalState, value: done }]);
    return { ok: true, transactionId: receipt.transactionId };
  } catch (error) {
    const cause = error instanceof Error && 'cause' in error && error.cause instanceof ApplicationFailure ? error.cause : null;
    const code = cause?.type ?? 'forge_failed';
    const message = cause?.message ?? (error instanceof Error ? error.message : String(error));
    await steps.recordForgeFailure({ proposalId: input.proposalId, kind: input.kind, code, message });
    // A failed undo leaves the applied change in place: the proposal stays executed.
    await steps.transitionProposal({ proposalId: input.proposalId, state: input.kind === 'apply' ? 'failed' : 'executed', detail: { code, message, kind: input.kind } });
    upsertSearchAttributes([{ key: ProposalState, value: input.kind === 'apply' ? 'failed' : 'executed' }]);
    // The domain state is recorded; now the execution itself fails, so an operator reading workflow
    // history sees Failed (with the stable code as its type), not Completed.
    throw ApplicationFailure.nonRetryable(message, code, { proposalId: input.proposalId, kind: input.kind });
  }
}
