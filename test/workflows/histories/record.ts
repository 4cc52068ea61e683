// Records the workflow histories test/workflows/replay.test.ts replays: each platform workflow run
// on the time-skipping server with stub activities (test/workflows/proposal-support.ts) through the
// paths it can take, including runs still open (a review waiting days for its decision, a review
// whose apply is in flight) — what a deployed worker finds in flight when new code arrives.
//
//   npx node test/workflows/histories/record.ts
//
// Re-record only for a change that may break runs in flight (with nothing deployed yet, or after
// they drained); otherwise keep the old histories and make the change replay-safe (patched()).
import { writeFileSync } from 'node:fs';
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
import type { StubActivities, TimeSkippingRun } from '../../support/time-skipping.ts';
import { opened, reviewInput, startReview, startUndo, stubs } from '../proposal-support.ts';

// Fixed ids, so a re-recording differs from the last one only where the workflows changed.
const proposalId = (n: number) => `00000000-0000-4000-8000-00000000000${n}`;
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

async function save(name: string, handle: WorkflowHandle): Promise<void> {
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
} finally {
  await env.teardown();
}
