// Starting the automation workflows, in one place and shared by everything that causes them (the
// automation gateway's proposals and ingested events start reviews, the Product Runtime's memory
// candidates too; undo starts a Forge undo, from the gateway or the reviewer console; events start
// webhook deliveries), so no interface imports another.
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import type { DatabasePool } from 'slonik';
import type { AutomationEvent } from '../../../domain/automation/events.ts';
import type { Proposal } from '../../../domain/automation/proposals.ts';
import { AccountId, ActionKind, ProposalState, WorkspaceId } from '../../../domain/automation/search-attributes.ts';
import { deliveryMessageId, MAX_DELIVERY_ATTEMPTS, subscribedEndpoints } from '../../../domain/automation/webhooks.ts';
import { deliveryWorkflowId } from '../../../domain/automation/workflow-ids.ts';
import { forgeExecution } from '../../../workflows/forge.ts';
import { proposalReview } from '../../../workflows/proposal-review.ts';
import { webhookDelivery } from '../../../workflows/webhook-delivery.ts';

/**
 * Starts the review workflow of a proposal, once: a running review is left be (USE_EXISTING), and a
 * closed one is never started again (REJECT_DUPLICATE), so a retried request cannot revive a
 * decided or expired proposal.
 */
export async function startReview(temporal: Client, taskQueue: string, proposal: Proposal): Promise<void> {
  await temporal.workflow
    .start(proposalReview, {
    taskQueue,
    workflowId: proposal.workflowId,
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    args: [
      {
        proposalId: proposal.id,
        proposerAccountId: proposal.proposerAccountId,
        actingForAccountId: proposal.actingForAccountId,
        expiresInMs: Math.max(0, Date.parse(proposal.expiresAt) - Date.parse(proposal.createdAt)),
      },
    ],
    typedSearchAttributes: [
      { key: WorkspaceId, value: proposal.workspaceId },
      { key: ActionKind, value: proposal.actionKind },
      { key: ProposalState, value: proposal.state },
      // The review acts for its proposer (a person; a product's service principal has no account).
      ...(proposal.proposerAccountId ? [{ key: AccountId, value: proposal.proposerAccountId }] : []),
    ],
  })
    .catch((error: unknown) => {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    });
}

/**
 * Starts the undo of a claimed proposal under the workflow id its claim named (each claim its own),
 * never a second time (FAIL, REJECT_DUPLICATE).
 */
export async function startUndo(temporal: Client, taskQueue: string, proposal: Proposal, workflowId: string, actorAccountId: string): Promise<void> {
  await temporal.workflow.start(forgeExecution, {
    taskQueue,
    workflowId,
    workflowIdConflictPolicy: 'FAIL',
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    args: [{ proposalId: proposal.id, kind: 'undo', actorAccountId }],
    typedSearchAttributes: [
      { key: WorkspaceId, value: proposal.workspaceId },
      { key: ActionKind, value: proposal.actionKind },
      { key: ProposalState, value: 'undoing' },
      // The undo acts for the reviewer who asked for it.
      { key: AccountId, value: actorAccountId },
    ],
  });
}

/** Starts one delivery workflow per subscribed endpoint; ids derive from event and endpoint, so a retry starts nothing new. */
export async function startDeliveries(deps: { db: DatabasePool; temporal: Client; taskQueue: string; retryBaseMs: number }, event: AutomationEvent): Promise<number> {
  const endpoints = await subscribedEndpoints(deps.db, event);
  for (const endpointId of endpoints) {
    const messageId = deliveryMessageId(event.id, endpointId);
    await deps.temporal.workflow.start(webhookDelivery, {
      taskQueue: deps.taskQueue,
      workflowId: deliveryWorkflowId(messageId),
      workflowIdConflictPolicy: 'USE_EXISTING',
      args: [{ endpointId, messageId, eventId: event.id, maxAttempts: MAX_DELIVERY_ATTEMPTS, baseDelayMs: deps.retryBaseMs }],
      typedSearchAttributes: [{ key: WorkspaceId, value: event.workspaceId }],
    });
  }
  return endpoints.length;
}
