// Every workflow id the automation builds, in one place. Ids are derived from what they act on, so
// a retried start finds the workflow already there instead of starting a second one.

/** The review of one proposal (stored with the proposal as its workflowId). */
export const reviewWorkflowId = (proposalId: string) => `proposal-review-${proposalId}`;

/**
 * The apply (run by the review) or the undo of a proposal: the idempotency key of its knowledge-core
 * write, so a retried or re-run step replays the first write instead of writing twice.
 */
export const forgeIdempotencyKey = (proposalId: string, kind: 'apply' | 'undo') => `forge-${kind}-${proposalId}`;

/** Each claimed undo is its own workflow (`forge-undo-<proposalId>-<n>`), so a failed undo can be tried again. */
export const undoWorkflowId = (proposalId: string, attempt: number) => `${forgeIdempotencyKey(proposalId, 'undo')}-${attempt}`;

/** One delivery of one event to one endpoint. */
export const deliveryWorkflowId = (messageId: string) => `webhook-${messageId}`;

// ---- the starts these workflows need, as durable intents (domain/workflow-intents.ts) ----------

/** The kinds of start the automation records; api/routes/shared/workflow-starts.ts makes each one. */
export const startKinds = { review: 'proposal-review', delivery: 'webhook-delivery', undo: 'forge-undo' } as const;

/** A proposal's review: every proposal enters one, recorded with the proposal itself. */
export const reviewStart = (proposalId: string) => ({ workflowId: reviewWorkflowId(proposalId), kind: startKinds.review, input: { proposalId } });

/** One delivery of an event to one endpoint (`messageId` from deliveryMessageId). */
export const deliveryStart = (input: { eventId: string; endpointId: string; messageId: string; workspaceId: string }) => ({
  workflowId: deliveryWorkflowId(input.messageId),
  kind: startKinds.delivery,
  input,
});

/** A claimed undo, under the workflow id its claim named. */
export const undoStart = (input: { proposalId: string; workflowId: string; actorAccountId: string }) => ({ workflowId: input.workflowId, kind: startKinds.undo, input });
