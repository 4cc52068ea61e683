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
