// Delivers one event to one webhook endpoint: attempts with exponential backoff and full jitter
// between them (timers here, because Temporal retry policies have no jitter), stopping at success,
// 410 Gone or a refused address; a delivery that exhausts its attempts counts toward disabling
// the endpoint, and the workflow then fails (visible as Failed). Every attempt is an execution
// record (written by the activity).
import { ApplicationFailure, proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';

const { deliverWebhook, recordFailedDelivery } = proxyActivities<Activities>({
  // One HTTP attempt has a 10 s deadline; an activity attempt that dies is retried as the same
  // delivery attempt (its request recorded as a repeat). Our own outage (Postgres unreachable, a
  // worker dying) must not spend the receiver's attempts or end the delivery: activity retries
  // ride out about four minutes of it (1 s doubling to 30 s, 12 tries) before the workflow fails.
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 12 },
});

export type DeliveryInput = { endpointId: string; messageId: string; eventId: string; maxAttempts: number; baseDelayMs: number };

export async function webhookDelivery(input: DeliveryInput): Promise<string> {
  for (let attempt = 1; attempt <= input.maxAttempts; attempt++) {
    const outcome = await deliverWebhook({ endpointId: input.endpointId, messageId: input.messageId, eventId: input.eventId, attempt });
    if (outcome === 'delivered' || outcome === 'gone' || outcome === 'skipped') return outcome;
    if (outcome === 'refused') break; // the address is not allowed: retrying cannot help
    if (attempt < input.maxAttempts) {
      const ceiling = Math.min(input.baseDelayMs * 2 ** (attempt - 1), 5 * 60_000);
      await sleep(Math.round(ceiling / 2 + Math.random() * (ceiling / 2))); // deterministic in a workflow
    }
  }
  await recordFailedDelivery(input.endpointId);
  // Recorded (execution records, failure streak); the workflow fails so its history shows Failed.
  throw ApplicationFailure.nonRetryable(`The delivery to endpoint ${input.endpointId} failed after its attempts.`, 'webhook_delivery_failed', {
    endpointId: input.endpointId,
    messageId: input.messageId,
  });
}
