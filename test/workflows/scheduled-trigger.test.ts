// The scheduled trigger's firing workflow with a stubbed activity on the time-skipping server: each
// firing records one run keyed by its own workflow id, so a retried firing is a no-op in the
// database (ON CONFLICT on the fire key) and a paused or deleted trigger fires nothing. The test
// server has no Schedules API, so firings are started the way the Schedule names them
// (`<scheduleId>-workflow-<nominal time>`); the Schedule itself runs on the dev server in
// automation-events.test.ts.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { scheduleIdOf } from '../../domain/automation/events.ts';
import { scheduledTriggerFire } from '../../workflows/scheduled-trigger.ts';
import { useTimeSkipping } from '../support/time-skipping.ts';
import type { StubActivities, TimeSkippingRun } from '../support/time-skipping.ts';

const temporal = useTimeSkipping();

/** The workflow id a Temporal Schedule gives the firing at `nominal`. */
const firingId = (triggerId: string, nominal: string) => `${scheduleIdOf(triggerId)}-workflow-${nominal}`;

const fire = ({ client, taskQueue }: TimeSkippingRun, triggerId: string, nominal: string) =>
  client.workflow.execute(scheduledTriggerFire, { taskQueue, workflowId: firingId(triggerId, nominal), args: [{ triggerId }] });

describe('scheduled trigger firing', () => {
  it("records one run per firing, keyed by the firing's workflow id", async () => {
    const triggerId = randomUUID();
    const calls: { triggerId: string; fireKey: string }[] = [];
    const activities: StubActivities = {
      async fireScheduledTrigger(id, fireKey) {
        calls.push({ triggerId: id, fireKey });
        return `run-${calls.length}`;
      },
    };
    await temporal.run(activities, async (run) => {
      expect(await fire(run, triggerId, '2026-01-01T09:00:00Z')).toBe('run-1');
      expect(await fire(run, triggerId, '2026-01-01T10:00:00Z')).toBe('run-2');
    });
    expect(calls).toEqual([
      { triggerId, fireKey: firingId(triggerId, '2026-01-01T09:00:00Z') },
      { triggerId, fireKey: firingId(triggerId, '2026-01-01T10:00:00Z') },
    ]);
  });

  it('completes with no run when the trigger is paused or gone (the activity records nothing)', async () => {
    const activities: StubActivities = { fireScheduledTrigger: async () => null };
    await temporal.run(activities, async (run) => {
      const handle = await run.client.workflow.start(scheduledTriggerFire, { taskQueue: run.taskQueue, workflowId: firingId(randomUUID(), '2026-01-01T09:00:00Z'), args: [{ triggerId: randomUUID() }] });
      expect(await handle.result()).toBeNull();
      expect((await handle.describe()).status.name).toBe('COMPLETED');
    });
  });

  it('retries a failed recording with the same fire key, so the firing records at most one run', async () => {
    const triggerId = randomUUID();
    const keys: string[] = [];
    const activities: StubActivities = {
      async fireScheduledTrigger(_id, fireKey) {
        keys.push(fireKey);
        if (keys.length < 3) throw new Error('database unreachable');
        return 'run-1';
      },
    };
    await temporal.run(activities, async (run) => {
      expect(await fire(run, triggerId, '2026-01-01T09:00:00Z')).toBe('run-1');
    });
    expect(keys).toEqual(Array(3).fill(firingId(triggerId, '2026-01-01T09:00:00Z')));
  });
});
