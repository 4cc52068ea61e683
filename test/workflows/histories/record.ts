// Records the workflow histories test/workflows/replay.test.ts replays: each platform workflow run
// on the time-skipping server with stub activities (test/workflows/proposal-support.ts) through the
// paths it can take, including runs still open (a review waiting days for its decision, a review
// whose apply is in flight) — what a deployed worker finds in flight when new code arrives.
//
//   npx node test/workflows/histories/record.ts [name-prefix …]
//
// With prefixes (e.g. `intelligence-usage`), only the histories whose names start with one are
// written: how a new workflow gets its recordings without re-recording the others.
//
// Re-record only for a change that may break runs in flight (with nothing deployed yet, or after
// they drained); otherwise keep the old histories and make the change replay-safe (patched()).
import { writeFileSync } from 'node:fs';
import { WorkflowUpdateStage } from '@temporalio/client';
import type { WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
// CommonJS: no named exports under plain Node (vitest's loader would allow them).
import proto from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { resolveTemporalTestServer } from '../../../platform/local-stack/temporal-test-server.ts';
import { workflowsPath } from '../../../workers/worker.ts';
import { decideUpdate } from '../../../workflows/proposal-review.ts';
import * as searchAttributeKeys from '../../../workflows/search-attributes.ts';
import { scheduledTriggerFire } from '../../../workflows/scheduled-trigger.ts';
import { webhookDelivery } from '../../../workflows/webhook-delivery.ts';
import { completeUpdate, intelligenceUsage, notReservedSignal, recordedSignal } from '../../../workflows/intelligence-usage.ts';
import { callbackUpdate, oauthConnection } from '../../../workflows/oauth-connection.ts';
import type { Completion, Reservation, ReservationState } from '../../../domain/intelligence/ledger.ts';
import type { AttemptFailureCode } from '../../../domain/connections/attempts.ts';
import type { StubActivities, TimeSkippingRun } from '../../support/time-skipping.ts';
import { heldStep, opened, reviewInput, startReview, startUndo, stubs } from '../proposal-support.ts';

// Fixed ids, so a re-recording differs from the last one only where the workflows changed.
const proposalId = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const proposer = '00000000-0000-4000-8000-0000000000a1';
const reviewer = { accountId: '00000000-0000-4000-8000-0000000000a2', actingForAccountId: null, permissions: ['automation.view', 'automation.review'] };
const stale = async (): Promise<never> => {
  throw ApplicationFailure.nonRetryable('The note changed since the proposal was made.', 'revision_conflict', { code: 'revision_conflict' });
};

const env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: resolveTemporalTestServer(process.env, console.log) } } });
const types = Object.fromEntries(Object.values(searchAttributeKeys).map((key) => [key.name, proto.temporal.api.enums.v1.IndexedValueType[`INDEXED_VALUE_TYPE_${key.type}`]]));
await env.connection.operatorService.addSearchAttributes({ namespace: env.namespace ?? 'default', searchAttributes: types });
const workflowBundle = await bundleWorkflowCode({ workflowsPath });

/**
 * protobufjs' own object form (replay.test.ts reads it back with History.fromObject). Not the SDK's
 * historyToJSON: in this install @temporalio/common and @temporalio/proto carry different
 * protobufjs majors, and its proto3 JSON conversion refuses the History type.
 */
const historyToObject = (history: proto.temporal.api.history.v1.IHistory) =>
  proto.temporal.api.history.v1.History.toObject(proto.temporal.api.history.v1.History.fromObject(history), { longs: String, enums: String, bytes: String });

const only = process.argv.slice(2);

async function save(name: string, handle: WorkflowHandle): Promise<void> {
  if (only.length > 0 && !only.some((prefix) => name.startsWith(prefix))) return;
  const file = new URL(`./${name}.json`, import.meta.url);
  // Failures' stack traces name this machine's paths and play no part in replay.
  const json = JSON.stringify(historyToObject(await handle.fetchHistory()), (key, value: unknown) => (key === 'stackTrace' ? undefined : value), 1);
  writeFileSync(file, `${json}\n`);
  console.log(`recorded ${name}`);
}

let queues = 0;
async function run(activities: StubActivities, fn: (run: TimeSkippingRun) => Promise<void>): Promise<void> {
  const taskQueue = `record-${++queues}`;
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle, activities });
  await worker.runUntil(fn({ client: env.client, taskQueue, env }));
}

const settled = (promise: Promise<unknown>) => promise.then(
  () => undefined,
  () => undefined,
);

try {
  const review = (n: number, expiresInMs = 7 * 24 * 3600_000) => reviewInput({ proposalId: proposalId(n), proposerAccountId: proposer, expiresInMs });

  await run(stubs().activities, async (r) => {
    const handle = await startReview(r, review(1));
    await opened(handle);
    await save('proposal-review.pending', handle);
    await handle.terminate('recorded');
  });

  await run(stubs().activities, async (r) => {
    const handle = await startReview(r, review(2, 24 * 3600_000));
    await handle.result();
    await save('proposal-review.expired', handle);
  });

  await run(stubs({ opened: 'rejected' }).activities, async (r) => {
    const handle = await startReview(r, review(3));
    await handle.result();
    await save('proposal-review.policy-rejected', handle);
  });

  await run(stubs().activities, async (r) => {
    const handle = await startReview(r, review(4));
    await opened(handle);
    await handle.executeUpdate(decideUpdate, { args: [{ decision: 'reject', reviewer, reason: 'not now' }] });
    await handle.result();
    await save('proposal-review.rejected', handle);
  });

  // The apply in flight: recorded while the activity runs, then let go.
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const applying = new Promise<void>((resolve) => (started = resolve));
  const gated = stubs({
    execute: async () => {
      started();
      await gate;
      return 'tx-1';
    },
  });
  await run(gated.activities, async (r) => {
    const handle = await startReview(r, review(5));
    await opened(handle);
    await handle.executeUpdate(decideUpdate, { args: [{ decision: 'approve', reviewer, reason: null }] });
    await applying;
    await save('proposal-review.applying', handle);
    release();
    await handle.result();
    await save('proposal-review.executed', handle);
  });

  await run(stubs({ execute: stale }).activities, async (r) => {
    const handle = await startReview(r, review(6));
    await opened(handle);
    await handle.executeUpdate(decideUpdate, { args: [{ decision: 'approve', reviewer, reason: null }] });
    await settled(handle.result());
    await save('proposal-review.apply-failed', handle);
  });

  // Since the decision is written after its acceptance (workflows/proposal-review.ts
  // DECISION_AFTER_ACCEPTANCE): a rejection by a recorded activity, an approval carried by the apply,
  // and a decision that arrived while the review was still opening.
  await run(stubs().activities, async (r) => {
    const handle = await startReview(r, review(8));
    await opened(handle);
    await handle.executeUpdate(decideUpdate, { args: [{ decision: 'reject', reviewer, reason: 'not now' }] });
    await handle.result();
    await save('proposal-review.recorded-decision.rejected', handle);
  });

  const apply = heldStep();
  await run(stubs({ execute: async () => (await apply.run(), 'tx-1') }).activities, async (r) => {
    const handle = await startReview(r, review(9));
    await opened(handle);
    await handle.executeUpdate(decideUpdate, { args: [{ decision: 'approve', reviewer, reason: 'fine' }] });
    await apply.begun;
    await save('proposal-review.recorded-decision.applying', handle);
    apply.release();
    await handle.result();
    await save('proposal-review.recorded-decision.executed', handle);
  });

  const policy = heldStep();
  await run(stubs({ opening: policy.run }).activities, async (r) => {
    const handle = await startReview(r, review(10), { workflowTaskTimeout: '1 second' });
    await policy.begun;
    const decided = await handle.startUpdate(decideUpdate, { args: [{ decision: 'approve', reviewer, reason: null }], waitForStage: WorkflowUpdateStage.ACCEPTED });
    policy.release();
    await decided.result();
    await handle.result();
    await save('proposal-review.decided-while-opening', handle);
  });

  // Since the start says how the proposal was opened (decision 105): no first step.
  await run(stubs().activities, async (r) => {
    const handle = await startReview(r, { ...review(11), openedAs: 'pending_review' });
    await opened(handle);
    await save('proposal-review.opened-at-start.pending', handle);
    await handle.executeUpdate(decideUpdate, { args: [{ decision: 'approve', reviewer, reason: null }] });
    await handle.result();
    await save('proposal-review.opened-at-start.executed', handle);
  });
  await run(stubs().activities, async (r) => {
    const handle = await startReview(r, { ...review(12), openedAs: 'rejected' });
    await handle.result();
    await save('proposal-review.opened-at-start.policy-rejected', handle);
  });

  // Since the start sets ProposalState and the review upserts only its changes (decision 109).
  await run(stubs().activities, async (r) => {
    const handle = await startReview(r, { ...review(13), openedAs: 'pending_review', stateAttribute: 'changes' });
    await opened(handle);
    await save('proposal-review.state-changes.pending', handle);
    await handle.executeUpdate(decideUpdate, { args: [{ decision: 'approve', reviewer, reason: null }] });
    await handle.result();
    await save('proposal-review.state-changes.executed', handle);
  });
  await run(stubs().activities, async (r) => {
    const handle = await startReview(r, { ...review(14), openedAs: 'pending_review', stateAttribute: 'changes' });
    await opened(handle);
    await handle.executeUpdate(decideUpdate, { args: [{ decision: 'reject', reviewer, reason: 'not now' }] });
    await handle.result();
    await save('proposal-review.state-changes.rejected', handle);
  });
  await run(stubs().activities, async (r) => {
    const handle = await startReview(r, { ...review(15), openedAs: 'rejected', stateAttribute: 'changes' });
    await handle.result();
    await save('proposal-review.state-changes.policy-rejected', handle);
  });

  await run(stubs({ execute: async () => 'tx-undo' }).activities, async (r) => {
    const handle = await startUndo(r, proposalId(7), reviewer.accountId);
    await handle.result();
    await save('forge-undo.undone', handle);
  });

  await run(stubs({ execute: stale }).activities, async (r) => {
    const handle = await startUndo(r, proposalId(8), reviewer.accountId);
    await settled(handle.result());
    await save('forge-undo.failed', handle);
  });

  const delivery = (n: number) => ({ endpointId: proposalId(n), messageId: `msg_${proposalId(n)}`, eventId: proposalId(n), maxAttempts: 6, baseDelayMs: 60_000 });
  const deliveries = (outcomes: Array<'failed' | 'delivered'>): StubActivities => ({
    async deliverWebhook(input) {
      return outcomes[Math.min(input.attempt, outcomes.length) - 1]!;
    },
    async recordFailedDelivery() {},
  });
  await run(deliveries(['failed', 'failed', 'delivered']), async ({ client, taskQueue }) => {
    const input = delivery(9);
    const handle = await client.workflow.start(webhookDelivery, { taskQueue, workflowId: `webhook-${input.messageId}`, args: [input], typedSearchAttributes: [{ key: searchAttributeKeys.WorkspaceId, value: proposer }] });
    await handle.result();
    await save('webhook-delivery.delivered', handle);
  });
  await run(deliveries(['failed']), async ({ client, taskQueue }) => {
    const input = delivery(0);
    const handle = await client.workflow.start(webhookDelivery, { taskQueue, workflowId: `webhook-${input.messageId}`, args: [input], typedSearchAttributes: [{ key: searchAttributeKeys.WorkspaceId, value: proposer }] });
    await settled(handle.result());
    await save('webhook-delivery.exhausted', handle);
  });

  await run({ fireScheduledTrigger: async () => 'run-1' }, async ({ client, taskQueue }) => {
    const handle = await client.workflow.start(scheduledTriggerFire, { taskQueue, workflowId: `trigger-${proposalId(1)}-workflow-2026-01-01T09:00:00Z`, args: [{ triggerId: proposalId(1) }] });
    await handle.result();
    await save('scheduled-trigger.fired', handle);
  });

  // A metered request's life (workflows/intelligence-usage.ts) over a ledger stub that moves as the
  // real compare-and-set does.
  const ledger = (initial: ReservationState | null): StubActivities => {
    let state = initial;
    const next: Record<Completion['kind'], ReservationState> = { settle: 'settled', release: 'released', billable_failure: 'billable_failure', expire: 'expired' };
    const allowed: Record<Completion['kind'], ReservationState[]> = { settle: ['dispatched'], release: ['reserved', 'dispatched'], billable_failure: ['dispatched'], expire: ['reserved'] };
    return {
      async completeIntelligenceReservation({ completion }: { workflowId: string; completion: Completion }) {
        if (state === null) return null;
        if (allowed[completion.kind].includes(state)) state = next[completion.kind];
        return { id: proposalId(9), state } as unknown as Reservation;
      },
    };
  };
  const usage = { reservationTtlMs: 60_000, completionDeadlineMs: 180_000 };
  const startUsage = ({ client, taskQueue }: TimeSkippingRun, n: number) =>
    client.workflow.start(intelligenceUsage, { taskQueue, workflowId: `intelligence-usage-${proposalId(n)}`, args: [usage] });
  await run(ledger('dispatched'), async (r) => {
    const handle = await startUsage(r, 1);
    await save('intelligence-usage.in-flight', handle);
    await handle.terminate('recorded');
  });
  await run(ledger('dispatched'), async (r) => {
    const handle = await startUsage(r, 2);
    await handle.executeUpdate(completeUpdate, { args: [{ kind: 'settle', costMicrodollars: 10, model: 'm', inputTokens: 1, outputTokens: 1, images: null }] });
    await handle.result();
    await save('intelligence-usage.settled', handle);
  });
  await run(ledger('reserved'), async (r) => {
    const handle = await startUsage(r, 3);
    await handle.result();
    await save('intelligence-usage.expired', handle);
  });
  // Dispatched and never reported (the API died): the completion deadline records a billable failure.
  await run(ledger('dispatched'), async ({ client, taskQueue }) => {
    const handle = await client.workflow.start(intelligenceUsage, {
      taskQueue,
      workflowId: `intelligence-usage-${proposalId(4)}`,
      args: [{ reservationTtlMs: 1_000, completionDeadlineMs: 1_000 }],
    });
    await handle.result();
    await save('intelligence-usage.billable-failure', handle);
  });
  // Settled by the API itself (the same compare-and-set, in its own transaction) and signalled:
  // the workflow ends with no ledger step; and the same signal while the completion deadline runs.
  await run(ledger('settled'), async (r) => {
    const handle = await startUsage(r, 6);
    await handle.signal(recordedSignal, { state: 'settled' });
    await handle.result();
    await save('intelligence-usage.settled-signalled', handle);
  });
  await run(ledger('dispatched'), async ({ client, taskQueue, env: skipping }) => {
    const handle = await client.workflow.start(intelligenceUsage, {
      taskQueue,
      workflowId: `intelligence-usage-${proposalId(7)}`,
      args: [{ reservationTtlMs: 1_000, completionDeadlineMs: 60_000 }],
    });
    await skipping.sleep(2_000);
    await handle.signal(recordedSignal, { state: 'settled' });
    await handle.result();
    await save('intelligence-usage.signalled-after-timer', handle);
  });
  await run(ledger(null), async (r) => {
    const handle = await startUsage(r, 5);
    await handle.signal(notReservedSignal);
    await handle.result();
    await save('intelligence-usage.never-reserved', handle);
  });

  // An OAuth attempt (workflows/oauth-connection.ts): open, expired, connected. The runs that end on
  // a timer followed by an activity use second-long timers: after a skip of minutes the time-skipping
  // server outran this recorder's worker (runUntil: "worker completed shutdown"), and a history
  // replays the same whatever its timers' lengths.
  const stateHash = 'a'.repeat(64);
  const oauthStubs: StubActivities = {
    async exchangeOAuthCode() {
      return { status: 'connected', connectionId: proposalId(1) };
    },
    async expireOAuthAttempt() {
      return { status: 'failed', code: 'oauth_state_expired' };
    },
    async failOAuthAttempt(input: { attemptId: string; code: AttemptFailureCode }) {
      return { status: 'failed', code: input.code };
    },
  };
  const startAttempt = ({ client, taskQueue }: TimeSkippingRun, n: number) =>
    client.workflow.start(oauthConnection, { taskQueue, workflowId: `oauth-connection-${proposalId(n)}`, args: [{ attemptId: proposalId(n), stateHash, ttlMs: 600_000 }] });
  await run(oauthStubs, async (r) => {
    const handle = await startAttempt(r, 1);
    await save('oauth-connection.awaiting-callback', handle);
    await handle.terminate('recorded');
  });
  await run(oauthStubs, async ({ client, taskQueue }) => {
    const handle = await client.workflow.start(oauthConnection, { taskQueue, workflowId: `oauth-connection-${proposalId(3)}`, args: [{ attemptId: proposalId(3), stateHash, ttlMs: 1_000 }] });
    await handle.result();
    await save('oauth-connection.expired', handle);
  });
  await run(oauthStubs, async (r) => {
    const handle = await startAttempt(r, 2);
    await handle.executeUpdate(callbackUpdate, { args: [{ stateHash, kind: 'code', sealedCode: 'k1:sealed-code' }] });
    await handle.result();
    await save('oauth-connection.connected', handle);
  });
} finally {
  await env.teardown();
}
