// The versioned automation event contract: the shape an ingested event is normalised into, read
// back, and delivered to webhook endpoints. Its own module so that events.ts (ingestion, which
// starts the deliveries) and webhooks.ts (the deliveries) both depend on it and not on each other.
import { z } from 'zod';
import { isoTimestamp } from '../../db/row-schemas.ts';

export const EVENT_CONTRACT = 'hnp.automation-event';
export const EVENT_CONTRACT_VERSION = 1;

export const eventSchema = z.object({
  contract: z.literal(EVENT_CONTRACT),
  version: z.number().int(),
  id: z.uuid(),
  workspaceId: z.uuid(),
  type: z.string(),
  source: z.string(),
  occurredAt: isoTimestamp,
  receivedAt: isoTimestamp,
  data: z.record(z.string(), z.unknown()),
});
export type AutomationEvent = z.infer<typeof eventSchema>;
