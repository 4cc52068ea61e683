// Workflow definitions registered on the platform task queue. Workflows are deterministic
// orchestration only: they import activities with `import type` and reach them through
// proxyActivities; message definitions (updates, signals, queries) live beside each workflow.
export { proposalReview } from './proposal-review.ts';
export { forgeExecution } from './forge.ts';
export { scheduledTriggerFire } from './scheduled-trigger.ts';
export { webhookDelivery } from './webhook-delivery.ts';
export { intelligenceUsage } from './intelligence-usage.ts';
export { oauthConnection } from './oauth-connection.ts';
