// Started by a trigger's Temporal Schedule at each firing; records one run (the firing's
// workflow id makes a retried firing a no-op). Processing the run happens on /process.
import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';

const { fireScheduledTrigger } = proxyActivities<Activities>({ startToCloseTimeout: '10 seconds' });

export async function scheduledTriggerFire(input: { triggerId: string }): Promise<string | null> {
  return fireScheduledTrigger(input.triggerId, workflowInfo().workflowId);
}
