// The webhook delivery workflow with stubbed activities on the time-skipping server: backoff timers
// pass in skipped time (minutes of backoff in a test that has 30 s), an exhausted delivery records
// the failure and then fails the workflow with a typed ApplicationFailure, and final outcomes stop
// the attempts. The HTTP side (signatures, the disabled endpoint) is in automation-webhooks.test.ts.
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import type { google } from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import { expectTypedFailure } from '../support/workflow-failures.ts';
import type { AttemptOutcome } from '../../domain/automation/webhooks.ts';
import { MAX_DELIVERY_ATTEMPTS } from '../../domain/automation/webhooks.ts';
import { WorkspaceId } from '../../workflows/search-attributes.ts';
import { webhookDelivery } from '../../workflows/webhook-delivery.ts';
import type { DeliveryInput } from '../../workflows/webhook-delivery.ts';
import { useTimeSkipping } from '../support/time-skipping.ts';
import type { StubActivities, TimeSkippingRun } from '../support/time-skipping.ts';

const temporal = useTimeSkipping();

/** Stub activities answering each attempt from `outcomes` (the last one repeats), recording the calls. */
function stubs(outcomes: AttemptOutcome[]) {
  const attempts: number[] = [];
  const failedDeliveries: string[] = [];
  const activities: StubActivities = {
    async deliverWebhook(input) {
      attempts.push(input.attempt);
      return outcomes[Math.min(input.attempt, outcomes.length) - 1]!;
    },
    async recordFailedDelivery(endpointId) {
      failedDeliveries.push(endpointId);
    },
  };
  return { activities, attempts, failedDeliveries };
}

function input(overrides: Partial<DeliveryInput> = {}): DeliveryInput {
  return { endpointId: randomUUID(), messageId: `msg_${randomUUID()}`, eventId: randomUUID(), maxAttempts: MAX_DELIVERY_ATTEMPTS, baseDelayMs: 60_000, ...overrides };
}

/** Started the way api/routes/automation/webhooks.ts starts it. */
const start = ({ client, taskQueue }: TimeSkippingRun, args: DeliveryInput) =>
  client.workflow.start(webhookDelivery, {
    taskQueue,
    workflowId: `webhook-${args.messageId}`,
    args: [args],
    typedSearchAttributes: [{ key: WorkspaceId, value: randomUUID() }],
  });

const durationMs = (d: google.protobuf.IDuration | null | undefined) => Number(d?.seconds ?? 0) * 1000 + Math.round((d?.nanos ?? 0) / 1e6);

/** The backoff timers the workflow started, in order (from its history). */
async function timers(handle: WorkflowHandle): Promise<number[]> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).flatMap((e) => (e.timerStartedEventAttributes ? [durationMs(e.timerStartedEventAttributes.startToFireTimeout)] : []));
}

/** Full jitter: attempt n waits between half and all of min(base·2^(n-1), 5 min). */
function expectBackoff(waits: number[], baseDelayMs: number) {
  waits.forEach((wait, i) => {
    const ceiling = Math.min(baseDelayMs * 2 ** i, 5 * 60_000);
    expect(wait).toBeGreaterThanOrEqual(ceiling / 2);
    expect(wait).toBeLessThanOrEqual(ceiling);
  });
}

describe('webhook delivery workflow', () => {
  it('retries with backoff until an attempt is delivered, in skipped time', async () => {
    const { activities, attempts, failedDeliveries } = stubs(['failed', 'failed', 'failed', 'delivered']);
    const args = input();
    await temporal.run(activities, async (run) => {
      const before = await run.env.currentTimeMs();
      const handle = await start(run, args);
      expect(await handle.result()).toBe('delivered');
      const waits = await timers(handle);
      expect(waits).toHaveLength(3);
      expectBackoff(waits, args.baseDelayMs);
      // The server's clock moved past every backoff (minutes), which the test never waited for.
      expect((await run.env.currentTimeMs()) - before).toBeGreaterThanOrEqual(waits.reduce((a, b) => a + b, 0));
      expect((await handle.describe()).status.name).toBe('COMPLETED');
    });
    expect(attempts).toEqual([1, 2, 3, 4]);
    expect(failedDeliveries).toEqual([]);
  });

  it('fails the workflow with a typed ApplicationFailure once the attempts are exhausted, after recording the failure', async () => {
    const { activities, attempts, failedDeliveries } = stubs(['failed']);
    const args = input();
    await temporal.run(activities, async (run) => {
      const handle = await start(run, args);
      // What an operator sees: the execution is Failed (not Completed), with the typed failure.
      await expectTypedFailure(handle, 'webhook_delivery_failed', { endpointId: args.endpointId, messageId: args.messageId });
      // Five waits between six attempts, the last capped at five minutes.
      const waits = await timers(handle);
      expect(waits).toHaveLength(MAX_DELIVERY_ATTEMPTS - 1);
      expectBackoff(waits, args.baseDelayMs);
    });
    expect(attempts).toEqual([1, 2, 3, 4, 5, 6]);
    expect(failedDeliveries).toEqual([args.endpointId]);
  });

  it('stops at once when the address is refused, and fails as an exhausted delivery', async () => {
    const { activities, attempts, failedDeliveries } = stubs(['refused']);
    const args = input();
    await temporal.run(activities, async (run) => {
      const handle = await start(run, args);
      await expectTypedFailure(handle, 'webhook_delivery_failed', { endpointId: args.endpointId, messageId: args.messageId });
      expect(await timers(handle)).toEqual([]);
    });
    expect(attempts).toEqual([1]);
    expect(failedDeliveries).toEqual([args.endpointId]);
  });

  it.each(['gone', 'skipped'] as const)('completes with %s without retrying or counting a failure', async (outcome) => {
    const { activities, attempts, failedDeliveries } = stubs([outcome]);
    await temporal.run(activities, async (run) => {
      const handle = await start(run, input());
      expect(await handle.result()).toBe(outcome);
      expect((await handle.describe()).status.name).toBe('COMPLETED');
    });
    expect(attempts).toEqual([1]);
    expect(failedDeliveries).toEqual([]);
  });

  it('retries an activity that dies as the same attempt, not as a new one', async () => {
    const attempts: number[] = [];
    const activities: StubActivities = {
      async deliverWebhook(input) {
        attempts.push(input.attempt);
        if (attempts.length === 1) throw new Error('worker lost the connection mid-attempt');
        return 'delivered';
      },
    };
    await temporal.run(activities, async (run) => {
      expect(await (await start(run, input())).result()).toBe('delivered');
    });
    expect(attempts).toEqual([1, 1]);
  });
});
