// Starting the automation workflows, in one place and shared by everything that causes them (the
// automation gateway's proposals and ingested events start reviews, the Product Runtime's memory
// candidates too; undo starts a Forge undo, from the gateway or the reviewer console; events start
// webhook deliveries), so no interface imports another.
//
// Every start is durable (docs/decisions.md, "durable starts"): the write that needs it recorded a
// start intent in its own transaction (domain/workflow-intents.ts), and here the request tries it
// at once, waiting on Temporal at most REQUEST_START_WAIT_MS; what is not started then is left to
// the relay (api/workflow-relay.ts), which makes the same start later. Each kind starts under a conflict
// policy that makes a second start of one workflow id a no-op, so the request and the relay may race.
import { isGrpcServiceError, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { AppError } from '../../../domain/errors.ts';
import type { Client } from '@temporalio/client';
import type { FastifyBaseLogger } from 'fastify';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import type { Proposal } from '../../../domain/automation/proposals.ts';
import { getProposal } from '../../../domain/automation/proposals.ts';
import { AccountId, ActionKind, ProposalState, WorkspaceId } from '../../../domain/automation/search-attributes.ts';
import { MAX_DELIVERY_ATTEMPTS } from '../../../domain/automation/webhooks.ts';
import { deliveryWorkflowId, reviewStart, startKinds } from '../../../domain/automation/workflow-ids.ts';
import { markStarted } from '../../../domain/workflow-intents.ts';
import type { StartIntent } from '../../../domain/workflow-intents.ts';
import { OAUTH_ATTEMPT_START_KIND } from '../../../domain/connections/attempts.ts';
import { forgeExecution } from '../../../workflows/forge.ts';
import { oauthConnection } from '../../../workflows/oauth-connection.ts';
import { proposalReview } from '../../../workflows/proposal-review.ts';
import type { ReviewInput } from '../../../workflows/proposal-review.ts';
import { webhookDelivery } from '../../../workflows/webhook-delivery.ts';

/** What starting a workflow needs; one per API process, shared by the interfaces and the relay. */
export type WorkflowStarter = { db: DatabasePool; temporal: Client; taskQueue: string; webhookRetryBaseMs: number };

/**
 * How long a request waits on Temporal for the starts it recorded: long enough for a healthy server
 * (a start takes ~5 ms), short beside a client's timeout; the relay makes what is left.
 */
export const REQUEST_START_WAIT_MS = 2_000;

const alreadyStarted = (error: unknown) => {
  if (error instanceof WorkflowExecutionAlreadyStartedError) return;
  throw error;
};

/**
 * How the review workflow of a proposal is started, once: a running review is left be
 * (USE_EXISTING), and a closed one is never started again (REJECT_DUPLICATE), so a retried request
 * cannot revive a decided or expired proposal. The relay's start and a decision's update-with-start
 * (proposal-decisions.ts) use the same options.
 */
export function reviewStartOptions(taskQueue: string, proposal: Proposal) {
  return {
    taskQueue,
    workflowId: proposal.workflowId,
    workflowIdConflictPolicy: 'USE_EXISTING' as const,
    workflowIdReusePolicy: 'REJECT_DUPLICATE' as const,
    args: [
      {
        proposalId: proposal.id,
        proposerAccountId: proposal.proposerAccountId,
        actingForAccountId: proposal.actingForAccountId,
        expiresInMs: Math.max(0, Date.parse(proposal.expiresAt) - Date.parse(proposal.createdAt)),
        // Opened with the proposal (decision 96): the review needs no first step to learn it (decision 105).
        ...(proposal.state === 'pending_review' || proposal.state === 'rejected' ? { openedAs: proposal.state } : {}),
        // ProposalState is set below; the review upserts only its changes (decision 109).
        stateAttribute: 'changes',
      },
    ] as [ReviewInput],
    typedSearchAttributes: [
      { key: WorkspaceId, value: proposal.workspaceId },
      { key: ActionKind, value: proposal.actionKind },
      { key: ProposalState, value: proposal.state },
      // The review acts for its proposer (a person; a product's service principal has no account).
      ...(proposal.proposerAccountId ? [{ key: AccountId, value: proposal.proposerAccountId }] : []),
    ],
  };
}

async function startReview(temporal: Client, taskQueue: string, proposal: Proposal): Promise<void> {
  await temporal.workflow.start(proposalReview, reviewStartOptions(taskQueue, proposal)).catch(alreadyStarted);
}

/**
 * Starts the undo of a claimed proposal under the workflow id its claim named (each claim its own),
 * never a second time (FAIL, REJECT_DUPLICATE: a second start is found already started).
 */
async function startUndo(temporal: Client, taskQueue: string, proposal: Proposal, workflowId: string, actorAccountId: string): Promise<void> {
  await temporal.workflow
    .start(forgeExecution, {
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
    })
    .catch(alreadyStarted);
}

const reviewInput = z.object({ proposalId: z.uuid() });
const deliveryInput = z.object({ eventId: z.uuid(), endpointId: z.uuid(), messageId: z.string(), workspaceId: z.uuid() });
const undoInput = z.object({ proposalId: z.uuid(), workflowId: z.string(), actorAccountId: z.uuid() });
const oauthInput = z.object({ attemptId: z.uuid(), stateHash: z.string(), ttlMs: z.number() });

/**
 * Makes one recorded start. Resolves when the workflow runs or ran (already started counts as done)
 * or when there is nothing left to start (the proposal is gone); throws when Temporal did not take it.
 */
export async function startIntent(s: WorkflowStarter, intent: Pick<StartIntent, 'workflowId' | 'kind' | 'input'>): Promise<void> {
  switch (intent.kind) {
    case startKinds.review: {
      const proposal = await getProposal(s.db, reviewInput.parse(intent.input).proposalId);
      if (proposal) await startReview(s.temporal, s.taskQueue, proposal);
      return;
    }
    case startKinds.delivery: {
      const input = deliveryInput.parse(intent.input);
      // One delivery per event and endpoint, ever: a closed delivery is not started again (at-least-once
      // is the delivery's own retries, not a second workflow).
      await s.temporal.workflow
        .start(webhookDelivery, {
          taskQueue: s.taskQueue,
          workflowId: deliveryWorkflowId(input.messageId),
          workflowIdConflictPolicy: 'USE_EXISTING',
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          args: [{ endpointId: input.endpointId, messageId: input.messageId, eventId: input.eventId, maxAttempts: MAX_DELIVERY_ATTEMPTS, baseDelayMs: s.webhookRetryBaseMs }],
          typedSearchAttributes: [{ key: WorkspaceId, value: input.workspaceId }],
        })
        .catch(alreadyStarted);
      return;
    }
    case startKinds.undo: {
      const input = undoInput.parse(intent.input);
      const proposal = await getProposal(s.db, input.proposalId);
      if (proposal) await startUndo(s.temporal, s.taskQueue, proposal, input.workflowId, input.actorAccountId);
      return;
    }
    case OAUTH_ATTEMPT_START_KIND: {
      // The attempt's workflow waits for Google's callback; a second start finds it (or its end) already there.
      await s.temporal.workflow
        .start(oauthConnection, {
          taskQueue: s.taskQueue,
          workflowId: intent.workflowId,
          workflowIdConflictPolicy: 'USE_EXISTING',
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          args: [oauthInput.parse(intent.input)],
        })
        .catch(alreadyStarted);
      return;
    }
    default:
      throw new Error(`unknown workflow start kind ${intent.kind}`);
  }
}

/**
 * Tries the starts a request recorded, each bounded by REQUEST_START_WAIT_MS, and marks those made;
 * the rest stay pending for the relay. Never throws: the write is committed and acknowledged either
 * way, and its starts are durable.
 */
export async function startRecorded(s: WorkflowStarter, intents: readonly StartIntent[], log: FastifyBaseLogger): Promise<{ started: number; deferred: number }> {
  if (intents.length === 0) return { started: 0, deferred: 0 };
  const deadline = Date.now() + REQUEST_START_WAIT_MS;
  const outcomes = await Promise.allSettled(intents.map((intent) => s.temporal.connection.withDeadline(deadline, () => startIntent(s, intent))));
  const started = intents.filter((_, i) => outcomes[i]!.status === 'fulfilled').map((i) => i.workflowId);
  const failure = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failure) {
    log.warn({ deferred: intents.length - started.length, reason: reasonOf(failure.reason) }, 'workflow starts left to the relay (Temporal did not take them in time)');
  }
  await markStarted(s.db, started).catch((error: unknown) => log.warn({ reason: reasonOf(error) }, 'could not mark workflow starts as made; the relay will find them already started'));
  return { started: started.length, deferred: intents.length - started.length };
}

/**
 * Starts the review of a proposal an interface submitted (its start was recorded with it): on the
 * first answer always; on a replay only while the proposal is still open (its review may not have
 * started yet; a second start is a no-op), never for a decided or closed one, whose review ran.
 * Awaited by the request, so a 201 means the review runs (Temporal up) and no start outlives its
 * request (decision 104 tried it after the answer: it raced the app's close and `/process`).
 */
export async function startSubmittedReview(s: WorkflowStarter, proposal: Pick<Proposal, 'id' | 'state'>, replayed: boolean, log: FastifyBaseLogger): Promise<void> {
  if (replayed && proposal.state !== 'proposed' && proposal.state !== 'pending_review') return;
  await startRecorded(s, [reviewStart(proposal.id)], log);
}

/** What a client is told to wait when Temporal did not answer a request that needs it now. */
export const WORKFLOW_SERVICE_RETRY_AFTER_SECONDS = 5;

/**
 * Whether an error is Temporal being unreachable or past the deadline (a gRPC failure, possibly as a
 * cause), rather than an answer of the workflow.
 */
export function isTemporalUnavailable(error: unknown): boolean {
  return isGrpcServiceError(error) || isGrpcServiceError((error as { cause?: unknown } | null)?.cause);
}

/** The 503 of a request that needs Temporal now and did not get it in time; nothing was confirmed. */
export function workflowServiceUnavailable(detail: string): AppError {
  return new AppError('workflow_service_unavailable', detail, { headers: { 'retry-after': String(WORKFLOW_SERVICE_RETRY_AFTER_SECONDS) } });
}

/** How long a request waits on a Temporal call it needs now (a schedule change, an Update). */
export const TEMPORAL_CALL_WAIT_MS = 5_000;

/**
 * A Temporal call a request needs now, bounded: Temporal unreachable or past TEMPORAL_CALL_WAIT_MS
 * is 503 `workflow_service_unavailable` (`what` says what was not done); any other failure is the call's own.
 */
export async function boundedTemporalCall<T>(temporal: Client, what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await temporal.connection.withDeadline(Date.now() + TEMPORAL_CALL_WAIT_MS, call);
  } catch (error) {
    if (isTemporalUnavailable(error)) throw workflowServiceUnavailable(what);
    throw error;
  }
}

/** A failure's stable reason for logs and the intent row: its class and gRPC code, never a payload. */
export function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return 'unknown';
  const code = (error as { code?: unknown }).code;
  const cause = error.cause instanceof Error ? `: ${error.cause.name}` : '';
  return `${error.name}${code !== undefined ? ` (code ${String(code)})` : ''}${cause}`.slice(0, 200);
}
