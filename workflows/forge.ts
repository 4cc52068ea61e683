// The Forge executor: one bounded execution of an approved action (or its undo). The apply runs
// inside the proposal's review workflow (no child workflow: one workflow per proposal); each undo is
// a workflow of its own (`forge-undo-<proposalId>-<n>`, started by the API once per claimed undo).
// The execution is one idempotent activity (domain runForgeExecution: the write replays under its
// idempotency key), so retries and worker crashes cannot write twice.
import { ApplicationFailure, proxyActivities, proxyLocalActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { ForgeStep } from '../domain/automation/forge.ts';
import { ProposalState } from './search-attributes.ts';

// Bounded: a note write takes milliseconds, so a worker that vanished mid-step is noticed (and the
// step retried elsewhere) within 10 s.
const { executeForge } = proxyActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds', maximumAttempts: 10 },
});
// A short state write, run in the worker without a round trip through the server.
const { recordForgeFailure } = proxyLocalActivities<Activities>({ startToCloseTimeout: '10 seconds', retry: { maximumInterval: '10 seconds' } });

/** A Forge execution either completes with this, or fails with an ApplicationFailure whose type is the stable code. */
export type ForgeResult = { ok: true; transactionId: string | null };

/**
 * Runs one execution in the calling workflow. On failure the domain state is recorded first, then
 * the workflow fails (ApplicationFailure, the stable code as its type), so an operator reading
 * workflow history sees Failed, not Completed. An apply with `input.approval` records the reviewer's
 * approval first (proposal-review.ts says why).
 */
export async function runForge(input: ForgeStep): Promise<ForgeResult> {
  upsertSearchAttributes([{ key: ProposalState, value: input.kind === 'apply' ? 'executing' : 'undoing' }]);
  try {
    const { transactionId } = await executeForge(input);
    upsertSearchAttributes([{ key: ProposalState, value: input.kind === 'apply' ? 'executed' : 'undone' }]);
    return { ok: true, transactionId };
  } catch (error) {
    const cause = error instanceof Error && 'cause' in error && error.cause instanceof ApplicationFailure ? error.cause : null;
    const code = cause?.type ?? 'forge_failed';
    const message = cause?.message ?? (error instanceof Error ? error.message : String(error));
    // A failed undo leaves the applied change in place: the proposal is executed again.
    const state = await recordForgeFailure({ proposalId: input.proposalId, kind: input.kind, code, message });
    upsertSearchAttributes([{ key: ProposalState, value: state }]);
    throw ApplicationFailure.nonRetryable(message, code, { proposalId: input.proposalId, kind: input.kind });
  }
}

/** An undo, started by the API as its own workflow. */
export async function forgeExecution(input: ForgeStep): Promise<ForgeResult> {
  return runForge(input);
}
